// Authentication (spec 5): missing, malformed, expired, revoked and unknown keys → 401; scopes
// read < read_write < admin, a key without the scope → 403; keys created, listed and revoked through
// the API (admin scope only).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { call, createPod, expectProblem, gpuBody, keyFor, startPodsControlPlane } from './pods-helpers.ts';

let cp: TestControlPlane;
let admin: { accountId: string; key: string };
let podId: string;

beforeAll(async () => {
  cp = await startPodsControlPlane();
  admin = await cp.newAccount('admin');
  podId = (await createPod(cp, gpuBody(), admin.key)).body.id;
});
afterAll(async () => cp?.close());

const raw = (path: string, init: RequestInit = {}) => call(cp, path, { key: null, ...init });

describe('401', () => {
  const headersCases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['an empty header', { authorization: '' }],
    ['Bearer without a token', { authorization: 'Bearer' }],
    ['Bearer and spaces', { authorization: 'Bearer    ' }],
    ['Basic credentials', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a bare key without Bearer', { authorization: 'gf_0123456789abcdef0123456789' }],
    ['two tokens', { authorization: 'Bearer abcdefghij klmnopqrst' }],
    ['a too-short key', { authorization: 'Bearer abc' }],
    ['an unknown key', { authorization: 'Bearer gf_unknown_key_0123456789abcdef' }],
    ['a key with non-ASCII', { authorization: 'Bearer gf_ключ_0123456789' }],
  ];
  test.each(headersCases)('%s', async (_label, headers) => {
    for (const [method, path, json] of [
      ['GET', '/v2/pods', undefined],
      ['GET', `/v2/pods/${podId}`, undefined],
      ['POST', '/v2/pods', gpuBody()],
      ['PATCH', `/v2/pods/${podId}`, { args: 'x' }],
      ['DELETE', `/v2/pods/${podId}`, undefined],
      ['POST', `/v2/pods/${podId}/action`, { action: 'stop' }],
    ] as const) {
      let c;
      try {
        c = await raw(path, { method, headers, ...(json ? { json } : {}) } as RequestInit);
      } catch (e) {
        // fetch itself refuses header values it cannot send (non-ASCII): nothing reached the server
        expect(String(e)).toMatch(/ByteString|header|invalid/i);
        continue;
      }
      expectProblem(c, 401, { code: 'UNAUTHENTICATED' });
    }
    // nothing happened to the pod
    expect((await call(cp, `/v2/pods/${podId}`, { key: admin.key })).body.status).toBe('PROVISIONING');
  });

  test('a revoked key → 401 from the next request on', async () => {
    const c = await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'to-revoke', scope: 'read_write' } });
    expect(c.status, c.text).toBe(201);
    const key = c.body.key as string;
    expect((await call(cp, '/v2/pods', { key })).status).toBe(200);
    const del = await call(cp, `/v2/keys/${c.body.id}`, { method: 'DELETE', key: admin.key });
    expect(del.status, del.text).toBe(200);
    expect(del.body.revokedAt).toBeTruthy();
    expect(del.body.hash).toBeUndefined();
    const after = await call(cp, '/v2/pods', { key });
    expectProblem(after, 401);
    expect(after.body.detail).toMatch(/revoked/);
    // revoking again is harmless; the key stays revoked
    expect((await call(cp, `/v2/keys/${c.body.id}`, { method: 'DELETE', key: admin.key })).status).toBe(200);
    expectProblem(await call(cp, `/v2/pods/${podId}`, { key }), 401);
  });

  test('a key revoked or deleted behind the API\'s back → 401 on the very next request', async () => {
    const a = await cp.services.keys.createKey({ accountId: admin.accountId, name: 'svc-revoke', scope: 'read' });
    const b = await cp.services.keys.createKey({ accountId: admin.accountId, name: 'svc-delete', scope: 'read' });
    for (const k of [a.key, b.key]) expect((await call(cp, '/v2/pods', { key: k })).status).toBe(200);
    await cp.services.keys.revoke(a.record.id, { accountId: admin.accountId, keyId: 'x', scope: 'admin', operator: false });
    await cp.services.store.transact((tx) => tx.delete('apiKeys', b.record.id));
    expectProblem(await call(cp, '/v2/pods', { key: a.key }), 401);
    expectProblem(await call(cp, '/v2/pods', { key: b.key }), 401);
    // an account that disappears takes its keys with it
    const gone = await cp.newAccount('read');
    expect((await call(cp, '/v2/pods', { key: gone.key })).status).toBe(200);
    await cp.services.store.transact((tx) => tx.delete('accounts', gone.accountId));
    expectProblem(await call(cp, '/v2/pods', { key: gone.key }), 401);
  });

  test('an expired key → 401', { timeout: 10_000 }, async () => {
    const expiresAt = Date.now() + 1000;
    const c = await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'short-lived', scope: 'read', expiresAt: new Date(expiresAt).toISOString() } });
    expect(c.status, c.text).toBe(201);
    const key = c.body.key as string;
    const before = await call(cp, '/v2/pods', { key });
    if (Date.now() < expiresAt - 50) expect(before.status).toBe(200); // (a very slow machine may already be past it)
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 200));
    const after = await call(cp, '/v2/pods', { key });
    expectProblem(after, 401);
    expect(after.body.detail).toMatch(/expired/);
  });
});

describe('403: scopes read < read_write < admin', () => {
  let keys: Record<'read' | 'read_write' | 'admin', string>;
  beforeAll(async () => {
    keys = {
      read: await keyFor(cp, admin.accountId, 'read'),
      read_write: await keyFor(cp, admin.accountId, 'read_write'),
      admin: await keyFor(cp, admin.accountId, 'admin'),
    };
  });

  const routes: { method: string; path: () => string; json?: () => unknown; needs: 'read' | 'read_write' | 'admin' }[] = [
    { method: 'GET', path: () => '/v2/pods', needs: 'read' },
    { method: 'GET', path: () => `/v2/pods/${podId}`, needs: 'read' },
    { method: 'GET', path: () => '/v2/catalog/cpus', needs: 'read' },
    { method: 'POST', path: () => '/v2/pods', json: () => gpuBody(), needs: 'read_write' },
    { method: 'PATCH', path: () => `/v2/pods/${podId}`, json: () => ({ args: 'a' }), needs: 'read_write' },
    { method: 'POST', path: () => `/v2/pods/${podId}/action`, json: () => ({ action: 'terminate' }), needs: 'read_write' },
    { method: 'GET', path: () => '/v2/keys', needs: 'admin' },
    { method: 'POST', path: () => '/v2/keys', json: () => ({ name: 'k', scope: 'read' }), needs: 'admin' },
  ];
  const rank = { read: 0, read_write: 1, admin: 2 } as const;

  test('each key reaches exactly the routes its scope covers', async () => {
    for (const scope of ['read', 'read_write', 'admin'] as const) {
      for (const r of routes) {
        if (r.method === 'POST' && r.path().endsWith('/action') && rank[scope] >= rank[r.needs]) continue; // terminating is tested below
        const c = await call(cp, r.path(), { method: r.method, key: keys[scope], ...(r.json ? { json: r.json() } : {}) });
        if (rank[scope] >= rank[r.needs]) expect(c.status, `${scope} ${r.method} ${r.path()}: ${c.text}`).toBeLessThan(300);
        else expectProblem(c, 403, { code: 'FORBIDDEN' });
      }
    }
  });

  test('a read key cannot change a pod, and the pod is unchanged', async () => {
    const before = (await call(cp, `/v2/pods/${podId}`, { key: keys.read })).body;
    expectProblem(await call(cp, `/v2/pods/${podId}/action`, { method: 'POST', key: keys.read, json: { action: 'stop' } }), 403);
    expectProblem(await call(cp, `/v2/pods/${podId}`, { method: 'PATCH', key: keys.read, json: { name: 'x' } }), 403);
    expectProblem(await call(cp, `/v2/pods/${podId}`, { method: 'DELETE', key: keys.read }), 403);
    expect((await call(cp, `/v2/pods/${podId}`, { key: keys.read })).body).toEqual(before);
  });

  test('403 is decided before the body is validated (no information about validity)', async () => {
    expectProblem(await call(cp, '/v2/pods', { method: 'POST', key: keys.read, json: { bogus: 1 } }), 403);
  });
});

describe('keys through the API', () => {
  test('admin creates a key: shown once, with scope and no hash', async () => {
    const c = await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'ci', scope: 'read_write' } });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ name: 'ci', scope: 'read_write', revokedAt: null, expiresAt: null, accountId: admin.accountId });
    expect(typeof c.body.key).toBe('string');
    expect(c.body.hash).toBeUndefined();
    expect((await call(cp, '/v2/pods', { key: c.body.key })).status).toBe(200);
    const list = await call(cp, '/v2/keys', { key: admin.key });
    expect(list.status).toBe(200);
    const rec = list.body.keys.find((k: { id: string }) => k.id === c.body.id);
    expect(rec).toMatchObject({ name: 'ci', scope: 'read_write' });
    expect(rec.key).toBeUndefined();
    expect(rec.hash).toBeUndefined();
    expect(JSON.stringify(list.body)).not.toContain(c.body.key);
  });

  test('keys are per account: listing shows only the caller\'s, revoking another\'s → 404', async () => {
    const other = await cp.newAccount('admin');
    const mine = await call(cp, '/v2/keys', { key: admin.key });
    const theirs = await call(cp, '/v2/keys', { key: other.key });
    const mineIds = new Set(mine.body.keys.map((k: { id: string }) => k.id));
    for (const k of theirs.body.keys) expect(mineIds.has(k.id)).toBe(false);
    for (const k of theirs.body.keys) expect(k.accountId).toBe(other.accountId);
    const victim = mine.body.keys[0].id;
    expectProblem(await call(cp, `/v2/keys/${victim}`, { method: 'DELETE', key: other.key }), 404);
    // a non-operator cannot mint keys for another account
    expectProblem(await call(cp, '/v2/keys', { method: 'POST', key: other.key, json: { name: 'x', scope: 'admin', accountId: admin.accountId } }), 403);
  });

  test('invalid key requests → 422', async () => {
    for (const json of [{ name: 'x', scope: 'root' }, { scope: 'read' }, { name: 'x', scope: 'read', extra: 1 }, { name: 'x', scope: 'read', expiresAt: 'tomorrow' }]) {
      expectProblem(await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json }), 422);
    }
    expectProblem(await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'x', scope: 'read', expiresAt: new Date(Date.now() - 1000).toISOString() } }), 422);
  });

  test('read_write and read keys cannot manage keys → 403', async () => {
    const rw = await keyFor(cp, admin.accountId, 'read_write');
    expectProblem(await call(cp, '/v2/keys', { method: 'POST', key: rw, json: { name: 'x', scope: 'read' } }), 403);
    expectProblem(await call(cp, '/v2/keys', { key: rw }), 403);
    const any = (await call(cp, '/v2/keys', { key: admin.key })).body.keys[0].id;
    expectProblem(await call(cp, `/v2/keys/${any}`, { method: 'DELETE', key: rw }), 403);
  });

  test('an admin key that revokes itself is refused from then on', async () => {
    const c = await call(cp, '/v2/keys', { method: 'POST', key: admin.key, json: { name: 'self', scope: 'admin' } });
    const self = c.body.key as string;
    expect((await call(cp, `/v2/keys/${c.body.id}`, { method: 'DELETE', key: self })).status).toBe(200);
    expectProblem(await call(cp, '/v2/keys', { key: self }), 401);
  });
});
