// Console sessions live in the store (docs/console.md, "Sessions and security"): two control planes on
// one PostgreSQL database; a session signed in on replica A is good on replica B, sign-out on B ends
// it on A, and a key revoked on B ends A's sessions of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { replicasOnOneDatabase } from '../../harness/replicas-on-one-database.ts';

let cluster: TestPostgres;
let cps: TestControlPlane[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
  cps = await replicasOnOneDatabase(cluster, 2, { secretKey: Buffer.alloc(32, 9) });
}, 120_000);
afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await cluster?.stop();
});

async function signIn(cp: TestControlPlane, key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${cp.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: key }) });
  expect(res.status).toBe(204);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const who = (await (await fetch(`${cp.url}/console/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  return { cookie, csrf: who.csrfToken };
}

const pods = (cp: TestControlPlane, cookie: string) => fetch(`${cp.url}/v2/pods`, { headers: { cookie } }).then((r) => r.status);

describe('console sessions on two replicas', () => {
  it('a session made on A opens B; sign-out on B ends it on A', async () => {
    const [a, b] = cps as [TestControlPlane, TestControlPlane];
    const { key } = await a.newAccount('read_write');
    const s = await signIn(a, key);
    expect(await pods(b, s.cookie)).toBe(200);
    const out = await fetch(`${b.url}/console/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(204);
    expect(await pods(a, s.cookie)).toBe(401);
  });

  it('a key revoked through B ends the sessions A made of it', async () => {
    const [a, b] = cps as [TestControlPlane, TestControlPlane];
    const { key, accountId } = await a.newAccount('read_write');
    const s = await signIn(a, key);
    expect(await pods(a, s.cookie)).toBe(200);
    const keyId = (await b.services.store.list('apiKeys', { accountId }))[0]!.id;
    expect((await b.api(`/v2/keys/${keyId}`, { method: 'DELETE' })).status).toBe(200);
    expect(await pods(a, s.cookie)).toBe(401);
  });
});
