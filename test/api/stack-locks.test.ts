// /v2/stack-locks/{stack} over a listening server: the route is thin, the rules are
// core/stacks/stack-lock-service.ts (a lease per account and stack, renewed by its holder, released by its
// holder or by force, gone when it expires).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';

let cp: TestControlPlane;
let alice: string;
let bob: string;

beforeAll(async () => {
  cp = await startTestControlPlane();
  alice = (await cp.newAccount('read_write')).key;
  bob = (await cp.newAccount('read_write')).key;
});
afterAll(async () => cp?.close());

const lock = (stack: string, key: string, json: unknown) => cp.api(`/v2/stack-locks/${stack}`, { method: 'POST', key, json });
const release = (stack: string, key: string, query = '') => cp.api(`/v2/stack-locks/${stack}${query}`, { method: 'DELETE', key });
const held = (stack: string, key: string) => cp.api(`/v2/stack-locks/${stack}`, { key });

test('acquire, renew by the same holder (acquiredAt kept, expiresAt moved), and who holds it', async () => {
  const first = await lock('prod', alice, { holder: 'ci (apply)', ttlSeconds: 60 });
  expect(first.status).toBe(200);
  const a = (await first.json()) as { stack: string; holder: string; acquiredAt: string; expiresAt: string };
  expect(a).toMatchObject({ stack: 'prod', holder: 'ci (apply)' });
  expect(Date.parse(a.expiresAt) - Date.parse(a.acquiredAt)).toBe(60_000);
  await new Promise((r) => setTimeout(r, 5));
  const renewed = (await (await lock('prod', alice, { holder: 'ci (apply)', ttlSeconds: 600 })).json()) as typeof a;
  expect(renewed.acquiredAt).toBe(a.acquiredAt);
  expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(a.expiresAt));
  expect(await (await held('prod', alice)).json()).toEqual(renewed);
});

test('another holder gets 409 LOCKED naming the holder; only the holder, or force=true, releases it', async () => {
  await lock('stage', alice, { holder: 'alice@laptop (apply)' });
  const other = await lock('stage', alice, { holder: 'ci (apply)' });
  expect(other.status).toBe(409);
  expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await other.json()) as { code: string; detail: string };
  expect(problem.code).toBe('LOCKED');
  expect(problem.detail).toMatch(/locked by alice@laptop \(apply\)/);

  expect((await release('stage', alice, '?holder=ci%20(apply)')).status).toBe(409);
  expect((await release('stage', alice, '?force=false')).status).toBe(409);
  expect((await release('stage', alice, '?force=true')).status).toBe(204);
  expect((await held('stage', alice)).status).toBe(404);
  // releasing what nobody holds is a no-op
  expect((await release('stage', alice)).status).toBe(204);
});

test('locks are per account: the same stack name in another account is another lock', async () => {
  await lock('shared-name', alice, { holder: 'alice' });
  expect((await lock('shared-name', bob, { holder: 'bob' })).status).toBe(200);
  expect(((await (await held('shared-name', alice)).json()) as { holder: string }).holder).toBe('alice');
  expect((await release('shared-name', bob, '?holder=bob')).status).toBe(204);
  expect((await held('shared-name', alice)).status).toBe(200);
});

test('an expired lease is no lock: GET says 404 and another holder takes it', async () => {
  await lock('short', alice, { holder: 'crashed apply', ttlSeconds: 1 });
  await new Promise((r) => setTimeout(r, 1100));
  expect((await held('short', alice)).status).toBe(404);
  const taken = await lock('short', alice, { holder: 'next apply' });
  expect(taken.status).toBe(200);
  expect(((await taken.json()) as { holder: string }).holder).toBe('next apply');
});

test('the body is checked against the model schema: 422 problem+json with JSONPath errors', async () => {
  const none = await lock('v', alice, {});
  expect(none.status).toBe(422);
  expect(((await none.json()) as { errors: string[] }).errors).toEqual(['$.holder: is required']);
  const bad = await lock('v', alice, { holder: 'x', ttlSeconds: 0, extra: 1 });
  expect(bad.status).toBe(422);
  expect(((await bad.json()) as { errors: string[] }).errors).toEqual(expect.arrayContaining(['$.extra: unknown property', '$.ttlSeconds: must be >= 1']));
});
