// The shared rate-limit counter when its database goes away: a replica keeps answering with the
// RateLimit headers, counting on its own (the store answers 503 for what needs it), and counts in the
// database again once it is back, where the windows it had there still stand.
import { parseList } from 'structured-headers';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { TEST_SECRET_KEY } from '../../harness/test-store.ts';

let server: TestPostgres;
let cp: TestControlPlane;

beforeAll(async () => {
  server = await startPostgres();
  cp = await startTestControlPlane({ rateLimits: 'minute=1000,hour=100000,day=1000000', config: { databaseUrl: await server.createDatabase(), secretKey: TEST_SECRET_KEY } });
}, 60_000);

afterAll(async () => {
  await cp?.close().catch(() => undefined);
  await server?.stop();
});

const remaining = (res: Response) => Number(parseList(res.headers.get('ratelimit') ?? '').find(([n]) => n === 'minute')?.[1].get('r'));

test('database killed: requests still carry RateLimit headers (counted on the replica) and the store answers 503; back: counted in the database again', async () => {
  const s = new Date().getSeconds();
  if (s > 40) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
  const { key } = await cp.newAccount('read_write', 100);
  for (let i = 0; i < 3; i++) expect((await cp.api('/v2/pods', { key })).status).toBe(200);
  const before = remaining(await cp.api('/v2/pods', { key }));
  expect(before).toBe(1000 - 4);

  await server.kill();
  // answered at once, with the headers (counted on this replica), never a hang or a 500
  const t0 = Date.now();
  const down = await cp.api('/healthz', { key: null });
  expect(down.status).toBe(200);
  expect(down.headers.get('ratelimit')).toMatch(/"minute";r=\d+/);
  const pods = await cp.api('/v2/pods', { key });
  expect(pods.status).toBe(503);
  expect(pods.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(pods.headers.get('ratelimit')).toMatch(/"minute";r=\d+/);
  expect(Date.now() - t0).toBeLessThan(2_000);

  await server.start();
  // back in the database: the account's window there still holds its first four requests
  const back = await (async () => {
    const end = Date.now() + 20_000;
    for (;;) {
      const res = await cp.api('/v2/pods', { key });
      if (res.status === 200) return res;
      if (Date.now() > end) throw new Error(`still ${res.status} after the database came back`);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  expect(remaining(back)).toBeLessThan(before);
  expect(remaining(back)).toBeGreaterThan(1000 - 40);
}, 90_000);
