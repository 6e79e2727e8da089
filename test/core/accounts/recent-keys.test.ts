// Keys taken on trust for a moment (core/accounts/recent-keys.ts): a key the control plane
// authenticated a moment ago answers without reading the store, and any write to the key or its
// account applies from the very next request on, as without the cache; a key never outlives its
// expiry; a lookup that a write overtook is not remembered. Real control planes (embedded store, and
// two replicas on one PostgreSQL database for a revocation made on another replica).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RECENT_KEY_MS, RecentKeys } from '../../../core/accounts/recent-keys.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { replicasOnOneDatabase } from '../../harness/replicas-on-one-database.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { call, expectProblem, startPodsControlPlane } from '../../api/pods-helpers.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startPodsControlPlane();
});
afterAll(async () => cp?.close());

/** counts the store's reads of keys and accounts from now on */
function countKeyReads(store: TestControlPlane['services']['store']): { reads: () => number; stop: () => void } {
  const get = store.get.bind(store);
  const list = store.list.bind(store);
  let n = 0;
  store.get = ((c: string, id: string) => {
    if (c === 'apiKeys' || c === 'accounts') n++;
    return get(c as never, id);
  }) as typeof store.get;
  store.list = ((c: string, where?: unknown) => {
    if (c === 'apiKeys' || c === 'accounts') n++;
    return list(c as never, where as never);
  }) as typeof store.list;
  return {
    reads: () => n,
    stop: () => {
      store.get = get;
      store.list = list;
    },
  };
}

describe('one control plane', () => {
  test('a key used a moment ago costs no store read; a write to it or its account applies on the very next request', async () => {
    const user = await cp.newAccount('read_write');
    // the first use writes lastUsedAt; the next one is remembered
    for (let i = 0; i < 2; i++) expect((await call(cp, '/v2/pods', { key: user.key })).status).toBe(200);
    // store reads of keys and accounts per request; on a loaded machine a request may come after the
    // entry's RECENT_KEY_MS (or after a write to the account), and read the store again: not all of them
    const counted = countKeyReads(cp.services.store);
    const reads: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const before = counted.reads();
        expect((await call(cp, '/v2/pods', { key: user.key })).status).toBe(200);
        reads.push(counted.reads() - before);
      }
    } finally {
      counted.stop();
    }
    expect(reads).toContain(0);
    const [rec] = await cp.services.store.list('apiKeys', { accountId: user.accountId });
    // the scope lowered behind the API's back: a write route is 403 at once
    await cp.services.store.transact(async (tx) => tx.put('apiKeys', { ...(await tx.get('apiKeys', rec!.id))!, scope: 'read' }));
    expectProblem(await call(cp, '/v2/pods', { key: user.key, method: 'POST', json: {} }), 403, { code: 'FORBIDDEN' });
    expect((await call(cp, '/v2/pods', { key: user.key })).status).toBe(200);
    // revoked: 401 at once, though it answered a moment ago
    await cp.services.keys.revoke(rec!.id, { accountId: user.accountId, keyId: rec!.id, scope: 'admin', operator: false });
    expectProblem(await call(cp, '/v2/pods', { key: user.key }), 401, { code: 'UNAUTHENTICATED' });
  });

  test('an operator account made an ordinary one loses the fleet routes on the very next request', async () => {
    const op = await cp.services.keys.createAccount({ email: `op-${process.pid}@example.com`, operator: true });
    const { key } = await cp.services.keys.createKey({ accountId: op.id, name: 'ops', scope: 'admin' });
    for (let i = 0; i < 3; i++) expect((await call(cp, '/v2/hosts', { key })).status).toBe(200);
    await cp.services.store.transact(async (tx) => tx.put('accounts', { ...(await tx.get('accounts', op.id))!, operator: false }));
    expectProblem(await call(cp, '/v2/hosts', { key }), 403, { code: 'FORBIDDEN' });
  });

  test('a key remembered until its expiry is refused from then on', { timeout: 15_000 }, async () => {
    const admin = await cp.newAccount('admin');
    const expiresAt = Date.now() + 1500;
    const c = await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'brief', scope: 'read', expiresAt: new Date(expiresAt).toISOString() } });
    expect(c.status).toBe(201);
    // first use (lastUsedAt written), then remembered; a very slow machine may be past the expiry already
    for (let i = 0; i < 3 && Date.now() < expiresAt - 100; i++) expect((await call(cp, '/v2/pods', { key: c.body.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 20));
    const after = await call(cp, '/v2/pods', { key: c.body.key });
    expectProblem(after, 401, { code: 'UNAUTHENTICATED' });
    expect(after.body.detail).toMatch(/expired/);
  });

  test('a lookup that a write to keys or accounts overtook is not remembered; an entry lives RECENT_KEY_MS at most', async () => {
    const recent = new RecentKeys(cp.services.store);
    const user = await cp.newAccount('read');
    const principal = { accountId: user.accountId, keyId: 'k-1', scope: 'read' as const, operator: false };
    const now = Date.now();
    const mark = recent.mark();
    // any write to a key or an account between the store read and the remembering
    await cp.services.store.transact(async (tx) => tx.put('accounts', { ...(await tx.get('accounts', user.accountId))!, name: 'renamed' }));
    recent.set('gf_k1', principal, mark, now, Infinity);
    expect(recent.get('gf_k1', now)).toBeUndefined();
    recent.set('gf_k1', principal, recent.mark(), now, Infinity);
    expect(recent.get('gf_k1', now + RECENT_KEY_MS - 1)).toEqual(principal);
    expect(recent.get('gf_k1', now + RECENT_KEY_MS)).toBeUndefined();
    // capped by the key's own end
    recent.set('gf_k2', principal, recent.mark(), now, now + 10);
    expect(recent.get('gf_k2', now + 10)).toBeUndefined();
    expect(recent.size).toEqual({ keys: 0, keyIds: 0, accounts: 0 });
    // a write to the account forgets its keys and only those; their index entries go with them
    recent.set('gf_k3', principal, recent.mark(), now, Infinity);
    recent.set('gf_k4', { ...principal, keyId: 'k-2' }, recent.mark(), now, Infinity);
    recent.set('gf_other', { ...principal, accountId: 'acc-other', keyId: 'k-3' }, recent.mark(), now, Infinity);
    expect(recent.size).toEqual({ keys: 3, keyIds: 3, accounts: 2 });
    await cp.services.store.transact(async (tx) => tx.put('accounts', { ...(await tx.get('accounts', user.accountId))!, name: 'renamed again' }));
    expect(recent.get('gf_k3', now)).toBeUndefined();
    expect(recent.get('gf_k4', now)).toBeUndefined();
    expect(recent.get('gf_other', now)).toMatchObject({ keyId: 'k-3' });
    expect(recent.size).toEqual({ keys: 1, keyIds: 1, accounts: 1 });
  });
});

describe('two replicas on one PostgreSQL database', () => {
  let cluster: TestPostgres;
  let cps: TestControlPlane[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
    cps = await replicasOnOneDatabase(cluster, 2, { secretKey: Buffer.alloc(32, 5) });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(cps.map((c) => c.close()));
    await cluster?.stop();
  });

  test('a key revoked through one replica is refused by the other within RECENT_KEY_MS, though that one had just used it', async () => {
    const [a, b] = cps as [TestControlPlane, TestControlPlane];
    const user = await a.newAccount('read');
    for (let i = 0; i < 3; i++) expect((await call(b, '/v2/pods', { key: user.key })).status).toBe(200);
    const [rec] = await a.services.store.list('apiKeys', { accountId: user.accountId });
    await a.services.keys.revoke(rec!.id, { accountId: user.accountId, keyId: rec!.id, scope: 'admin', operator: false });
    expectProblem(await call(a, '/v2/pods', { key: user.key }), 401);
    // the change feed usually tells it within milliseconds; the entry's life bounds it when it does not
    // (the rest of the limit is for a loaded machine)
    await waitFor('the other replica refuses the key', async () => (await call(b, '/v2/pods', { key: user.key })).status === 401, RECENT_KEY_MS + 2000, 20);
  });
});
