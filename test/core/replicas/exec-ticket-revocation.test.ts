// Exec tickets across replicas (issue 18, item 9): a ticket is held by the replica that issued it,
// and a key revoked on another replica must kill it there too, within its 30 s. Two control planes
// on one PostgreSQL database; the ticket is redeemed on the replica that issued it, after the key was
// revoked through the other one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';

const SECRET_KEY = Buffer.alloc(32, 7);

let cluster: TestPostgres;
let cps: TestControlPlane[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
  const url = await cluster.createDatabase();
  cps = await Promise.all([0, 1].map(() => startTestControlPlane({ config: { databaseUrl: url, secretKey: SECRET_KEY } })));
}, 120_000);
afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await cluster?.stop();
});

/** the HTTP status a WebSocket upgrade with this ticket is answered (a refusal comes before the upgrade) */
function upgradeStatus(cp: TestControlPlane, podId: string, ticket: string): Promise<number> {
  const ws = new WebSocket(`${cp.url.replace(/^http/, 'ws')}/v2/pods/${podId}/exec/ws?command=id&ticket=${encodeURIComponent(ticket)}`);
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', reject);
  });
}

describe('exec tickets on two replicas', () => {
  it('a key revoked on replica B kills the tickets replica A issued for it; a live key’s ticket still passes the guard', async () => {
    const [a, b] = cps as [TestControlPlane, TestControlPlane];
    const acct = await a.newAccount('read_write');
    const { key: spare } = await a.services.keys.createKey({ accountId: acct.accountId, name: 'spare', scope: 'read_write' });
    const doomed = await a.services.keys.authenticate(`Bearer ${acct.key}`);
    const live = await a.services.keys.authenticate(`Bearer ${spare}`);
    // no pod needed: the guard redeems the ticket before the route looks the pod up (404)
    const podId = 'pod-not-there';
    const t1 = a.services.podExec.tickets.issue(doomed, podId).ticket;
    const t2 = a.services.podExec.tickets.issue(live, podId).ticket;
    const revoked = await b.api(`/v2/keys/${doomed.keyId}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(await upgradeStatus(a, podId, t1)).toBe(401);
    // the live key's ticket got past the guard: the route's own answer, the pod is not there
    expect(await upgradeStatus(a, podId, t2)).toBe(404);
  }, 60_000);
});
