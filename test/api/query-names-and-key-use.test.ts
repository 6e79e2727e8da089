// Low findings of issue 8 (item 10): query parameters named like members of Object.prototype are as
// unknown as any other name (an own-property check, not `in`); `lastUsedAt` of a key is set when the
// key is used, written through the store at most once a minute per key.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LAST_USED_EVERY_MS } from '../../core/accounts/api-keys.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { call, expectProblem, startPodsControlPlane } from './pods-helpers.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startPodsControlPlane({ rateLimits: 'minute=100000,hour=100000,day=100000' });
});
afterAll(async () => cp?.close());

describe('unknown query parameters', () => {
  const lists = ['/v2/pods', '/v2/templates', '/v2/network-volumes', '/v2/registries', '/v1/endpoints'];
  const inherited = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'isPrototypeOf'];

  test('names of Object.prototype members are refused with 422 on every list route', async () => {
    const user = await cp.newAccount('read');
    for (const p of lists) {
      expect((await call(cp, p, { key: user.key })).status, p).toBe(200);
      for (const name of inherited) {
        const c = await call(cp, `${p}?${name}=x`, { key: user.key });
        expectProblem(c, 422, { code: 'VALIDATION_FAILED', errorMatching: `$.${name}: unknown query parameter` });
      }
    }
  });

  test('api_key is no exception on REST: with a Bearer key, ?api_key= is an unknown parameter (422)', async () => {
    const user = await cp.newAccount('read');
    for (const p of lists) expectProblem(await call(cp, `${p}?api_key=${user.key}`, { key: user.key }), 422, { errorMatching: '$.api_key: unknown query parameter' });
  });
});

describe('lastUsedAt of API keys', () => {
  test('null until used, set on first use, not rewritten within a minute, rewritten once stale', { timeout: 30_000 }, async () => {
    const user = await cp.newAccount('read');
    const [rec] = await cp.services.store.list('apiKeys', { accountId: user.accountId });
    expect(rec!.lastUsedAt).toBeNull();

    const t0 = Date.now();
    expect((await call(cp, '/v2/pods', { key: user.key })).status).toBe(200);
    const used = (await cp.services.store.get('apiKeys', rec!.id))!;
    expect(used.lastUsedAt).not.toBeNull();
    expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(t0 - 1000);
    expect(Date.parse(used.lastUsedAt!)).toBeLessThanOrEqual(Date.now());
    // the owner sees it in the key listing
    const admin = await cp.services.keys.createKey({ accountId: user.accountId, name: 'lister', scope: 'admin' });
    const listed = await call(cp, '/v2/keys', { key: admin.key });
    expect(listed.body.keys.find((k: { id: string }) => k.id === rec!.id).lastUsedAt).toBe(used.lastUsedAt);

    // 30 more requests, 10 of them at once: no write (records are frozen; an unchanged record is the same object)
    for (let i = 0; i < 20; i++) await call(cp, '/v2/pods', { key: user.key });
    await Promise.all(Array.from({ length: 10 }, () => call(cp, '/v2/pods', { key: user.key })));
    expect(await cp.services.store.get('apiKeys', rec!.id)).toBe(used);

    // once the stored time is older than the throttle, the next use writes it again, once
    const stale = new Date(Date.now() - LAST_USED_EVERY_MS - 1000).toISOString();
    await cp.services.store.transact(async (tx) => tx.put('apiKeys', { ...(await tx.get('apiKeys', rec!.id))!, lastUsedAt: stale }));
    const t1 = Date.now();
    await Promise.all(Array.from({ length: 10 }, () => call(cp, '/v2/pods', { key: user.key })));
    const again = (await cp.services.store.get('apiKeys', rec!.id))!;
    expect(Date.parse(again.lastUsedAt!)).toBeGreaterThanOrEqual(t1 - 1000);
    await call(cp, '/v2/pods', { key: user.key });
    expect(await cp.services.store.get('apiKeys', rec!.id)).toBe(again);
  });

  test('a revoked key is not marked used', async () => {
    const user = await cp.newAccount('read');
    const [rec] = await cp.services.store.list('apiKeys', { accountId: user.accountId });
    await cp.services.keys.revoke(rec!.id, { accountId: user.accountId, keyId: rec!.id, scope: 'admin', operator: false });
    expectProblem(await call(cp, '/v2/pods', { key: user.key }), 401);
    expect((await cp.services.store.get('apiKeys', rec!.id))!.lastUsedAt).toBeNull();
  });
});
