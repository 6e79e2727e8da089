// Three control-plane replicas on one real PostgreSQL database, each with its own pool and its own
// data directory, as three processes would be (in-process here, so a test can read their services):
// rate limits count per account across the replicas, an Idempotency-Key replayed on another replica
// returns the same pod, stack locks hold across them, and a job enqueued on one replica reaches a
// worker waiting on another.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseList } from 'structured-headers';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { TEST_SECRET_KEY } from '../../harness/test-store.ts';
import { eventually, startInProcessWorker } from '../../api/jobs/in-process-workers.ts';
import { StoreWorkerDirectory } from '../../api/jobs/store-worker-directory.ts';
import type { WorkerHandle } from '../../../worker/index.ts';

const QUOTA = 12;
let server: TestPostgres;
let url: string;
const cps: TestControlPlane[] = [];
let user: { accountId: string; key: string };

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  // one after the other: the first migrates the empty database and creates the admin key
  for (let i = 0; i < 3; i++)
    cps.push(await startTestControlPlane({ rateLimits: `minute=${QUOTA},hour=100000,day=1000000`, config: { databaseUrl: url, secretKey: TEST_SECRET_KEY } }));
  await seedHosts(cps[0]!.services.store, [{ id: 'gpu-r1', gpus: 8, diskFreeGb: 100_000 }]);
  user = await cps[0]!.newAccount('read_write', 100);
}, 120_000);

afterAll(async () => {
  for (const cp of cps) await cp.close().catch(() => undefined);
  await server?.stop();
});

/** `r` of the minute window in a RateLimit header */
function minuteRemaining(res: Response): number {
  const list = parseList(res.headers.get('ratelimit') ?? '');
  const minute = list.find(([name]) => name === 'minute');
  return Number(minute?.[1].get('r'));
}

/** so that the minute window does not roll over in the middle of a test (windows are aligned to the epoch) */
async function awayFromMinuteEnd(): Promise<void> {
  const s = new Date().getSeconds();
  if (s > 45) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
}

test('every replica has its own replica id and, with the database, leases and a shared rate limit', () => {
  const ids = new Set(cps.map((cp) => cp.services.replicaId));
  expect(ids.size).toBe(3);
  for (const cp of cps) expect(cp.services.hostLeases.shared).toBe(true);
});

test("rate limit per account across replicas: requests spread over three replicas hit the account's quota, not three times it", async () => {
  await awayFromMinuteEnd();
  const acct = await cps[0]!.newAccount('read_write', 100);
  // one on each replica in turn: each answer counts the ones the others took
  const seen: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await cps[i]!.api('/v2/pods', { key: acct.key });
    expect(res.status).toBe(200);
    seen.push(minuteRemaining(res));
  }
  expect(seen).toEqual([QUOTA - 1, QUOTA - 2, QUOTA - 3]);
  // then 30 at once, spread over the three: exactly the rest of the quota succeeds
  const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => cps[i % 3]!.api('/v2/pods', { key: acct.key })));
  const codes = burst.map((r) => r.status);
  expect(codes.filter((c) => c === 200).length).toBe(QUOTA - 3);
  expect(codes.filter((c) => c === 429).length).toBe(30 - (QUOTA - 3));
  const refused = burst.find((r) => r.status === 429)!;
  expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(minuteRemaining(refused)).toBe(0);
  // every replica refuses now; a refused request is not counted, and another account is not affected
  for (const cp of cps) expect((await cp.api('/v2/pods', { key: acct.key })).status).toBe(429);
  const other = await cps[1]!.newAccount('read_write', 100);
  expect((await cps[2]!.api('/v2/pods', { key: other.key })).status).toBe(200);
});

test('an Idempotency-Key replayed on another replica returns the same pod; sent to all three at once, one pod exists', async () => {
  await awayFromMinuteEnd();
  const acct = await cps[0]!.newAccount('read_write', 100);
  const body = { name: `idem-${process.pid}`, image: 'busybox:1.36', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, disk: 5 };
  const key = `k-${Date.now()}`;
  const first = await cps[0]!.api('/v2/pods', { method: 'POST', key: acct.key, json: body, headers: { 'idempotency-key': key } });
  expect(first.status).toBe(201);
  const id = ((await first.json()) as { id: string }).id;
  for (const cp of cps.slice(1)) {
    const again = await cp.api('/v2/pods', { method: 'POST', key: acct.key, json: body, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { id: string }).id).toBe(id);
  }
  // a different body under the same key is refused on any replica
  const mismatch = await cps[2]!.api('/v2/pods', { method: 'POST', key: acct.key, json: { ...body, disk: 6 }, headers: { 'idempotency-key': key } });
  expect(mismatch.status).toBe(422);

  const key2 = `k2-${Date.now()}`;
  const body2 = { ...body, name: `idem2-${process.pid}` };
  const all = await Promise.all(cps.flatMap((cp) => [0, 1].map(() => cp.api('/v2/pods', { method: 'POST', key: acct.key, json: body2, headers: { 'idempotency-key': key2 } }))));
  const ids = await Promise.all(all.map(async (r) => (r.status === 201 ? ((await r.json()) as { id: string }).id : `status ${r.status}`)));
  expect(new Set(ids).size, ids.join(', ')).toBe(1);
  const pods = await cps[1]!.services.store.list('pods', { accountId: acct.accountId, name: body2.name });
  expect(pods.length).toBe(1);
});

test('stack locks across replicas: three holders asking at once on three replicas, exactly one gets the lock', async () => {
  await awayFromMinuteEnd();
  const acct = await cps[0]!.newAccount('read_write', 100);
  const stack = `prod-${Date.now()}`;
  const res = await Promise.all(cps.map((cp, i) => cp.api(`/v2/stack-locks/${stack}`, { method: 'POST', key: acct.key, json: { holder: `h${i}` } })));
  const codes = res.map((r) => r.status).sort();
  expect(codes).toEqual([200, 409, 409]);
  const winner = res.findIndex((r) => r.status === 200);
  // the holder renews on another replica; the others are still refused there
  expect((await cps[(winner + 1) % 3]!.api(`/v2/stack-locks/${stack}`, { method: 'POST', key: acct.key, json: { holder: `h${winner}` } })).status).toBe(200);
  const loser = (winner + 1) % 3;
  expect((await cps[(winner + 2) % 3]!.api(`/v2/stack-locks/${stack}`, { method: 'POST', key: acct.key, json: { holder: `h${loser}` } })).status).toBe(409);
});

test('a job enqueued on replica A reaches a worker waiting on replica C', async () => {
  await awayFromMinuteEnd();
  const [a, , c] = cps as [TestControlPlane, TestControlPlane, TestControlPlane];
  const tpl = await a.api('/v2/templates', { method: 'POST', key: user.key, json: { name: `job-r-${Date.now()}`, image: 'busybox', serverless: true } });
  expect(tpl.status).toBe(201);
  const templateId = ((await tpl.json()) as { id: string }).id;
  const ep = await a.api('/v1/endpoints', { method: 'POST', key: user.key, json: { templateId, gpuTypeIds: ['ADA_24'] } });
  expect(ep.status).toBe(200);
  const endpointId = ((await ep.json()) as { id: string }).id;
  // the worker's directory is C's: its token is good on C only, so its job-take long-polls C
  const directory = new StoreWorkerDirectory(c.services.store);
  c.services.workerPorts.register(directory);
  let handle: WorkerHandle | null = null;
  try {
    const w = await startInProcessWorker(c, directory, endpointId);
    handle = w.handle;
    // the worker is waiting in job-take on C before the job exists
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    const run = await a.api(`/v2/${endpointId}/run`, { method: 'POST', key: user.key, json: { input: { output: 'from-a' } } });
    expect(run.status).toBe(200);
    const jobId = ((await run.json()) as { id: string }).id;
    const done = await eventually(async () => {
      const s = await a.api(`/v2/${endpointId}/status/${jobId}`, { key: user.key });
      const b = (await s.json()) as { status: string; output?: unknown };
      return b.status === 'COMPLETED' ? b : null;
    }, 20_000, 'the job to complete');
    expect(done.output).toBe('from-a');
    console.log(`job enqueued on A, taken and completed by a worker on C: ${Date.now() - t0} ms`);
  } finally {
    await handle?.stop();
  }
});

test('the shared rate-limit rows and host leases live in the database (migration 2)', async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const t = await client.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_name IN ('gf_rate_limits','gf_host_leases','gf_replicas') ORDER BY 1");
    expect(t.rows.map((r) => r.t)).toEqual(['gf_host_leases', 'gf_rate_limits', 'gf_replicas']);
    const rows = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM gf_rate_limits WHERE subject LIKE 'acct:%'");
    expect(rows.rows[0]!.n).toBeGreaterThan(0);
  } finally {
    await client.end();
  }
});
