// Templates over a listening server: validation, per-account names and visibility, pods built from a
// template with body overrides, and deletes refused while a pod or endpoint uses the template.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8 }]);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
});
afterAll(async () => cp?.close());

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: J }> {
  const res = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('validation', () => {
  test('an unknown property is a 422 naming it', async () => {
    const r = await call(alice.key, 'POST', '/v2/templates', { name: 't-x', image: 'busybox', imageName: 'busybox' });
    expect(r.status).toBe(422);
    expect(r.body.errors).toContain('$.imageName: unknown property');
  });

  test('missing image and a bad port are 422 with every failure listed', async () => {
    const r = await call(alice.key, 'POST', '/v2/templates', { name: 't-y', ports: ['99999/tcp'] });
    expect(r.status).toBe(422);
    expect(r.body.errors).toContain('$.image: is required');
    const p = await call(alice.key, 'POST', '/v2/templates', { name: 't-y', image: 'busybox', ports: ['99999/tcp'] });
    expect(p.status).toBe(422);
    expect(p.body.errors).toEqual(['$.ports[0]: port must be between 1 and 65535']);
  });

  test('a registry of another account is refused', async () => {
    const reg = await call(bob.key, 'POST', '/v2/registries', { name: 'bob-reg', username: 'u', password: 'p' });
    const r = await call(alice.key, 'POST', '/v2/templates', { name: 't-reg', image: 'busybox', registry: reg.body.id });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatch(/^\$\.registry: /);
  });

  test('a public template cannot carry registry credentials (400)', async () => {
    const reg = await call(alice.key, 'POST', '/v2/registries', { name: 'alice-reg', username: 'u', password: 'p' });
    const r = await call(alice.key, 'POST', '/v2/templates', { name: 't-pub-reg', image: 'busybox', registry: reg.body.id, public: true });
    expect(r.status).toBe(400);
  });
});

test('create applies the v2 defaults and names are unique per account', async () => {
  const r = await call(alice.key, 'POST', '/v2/templates', { name: 'base', image: 'busybox' });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({ name: 'base', image: 'busybox', args: '', disk: 20, ports: [], env: {}, registry: null, mounts: {}, startSsh: true, startJupyter: true, public: false, serverless: false, category: 'NVIDIA' });
  expect(r.body.accountId).toBeUndefined();
  const dup = await call(alice.key, 'POST', '/v2/templates', { name: 'base', image: 'other' });
  expect(dup.status).toBe(409);
  const elsewhere = await call(bob.key, 'POST', '/v2/templates', { name: 'base', image: 'busybox' });
  expect(elsewhere.status).toBe(201);
});

test('other accounts get 404 for private templates; public ones are readable but not writable', async () => {
  const priv = await call(alice.key, 'POST', '/v2/templates', { name: 'private-1', image: 'busybox' });
  const pub = await call(alice.key, 'POST', '/v2/templates', { name: 'public-1', image: 'busybox', public: true });
  expect((await call(bob.key, 'GET', `/v2/templates/${priv.body.id}`)).status).toBe(404);
  expect((await call(bob.key, 'PATCH', `/v2/templates/${priv.body.id}`, { image: 'x' })).status).toBe(404);
  expect((await call(bob.key, 'DELETE', `/v2/templates/${priv.body.id}`)).status).toBe(404);
  expect((await call(bob.key, 'GET', `/v2/templates/${pub.body.id}`)).status).toBe(200);
  expect((await call(bob.key, 'PATCH', `/v2/templates/${pub.body.id}`, { image: 'x' })).status).toBe(404);
  const bobList = await call(bob.key, 'GET', '/v2/templates');
  expect(bobList.body.templates.map((t: J) => t.id)).not.toContain(pub.body.id);
  const withPublic = await call(bob.key, 'GET', '/v2/templates?includePublic=true');
  expect(withPublic.body.templates.map((t: J) => t.id)).toContain(pub.body.id);
  expect(withPublic.body.templates.map((t: J) => t.id)).not.toContain(priv.body.id);
  expect((await call(bob.key, 'GET', '/v2/templates?bogus=1')).status).toBe(422);
});

test('PATCH changes only the fields sent and keeps names unique', async () => {
  const t = await call(alice.key, 'POST', '/v2/templates', { name: 'patch-me', image: 'busybox', env: { A: '1' } });
  const r = await call(alice.key, 'PATCH', `/v2/templates/${t.body.id}`, { args: 'sleep 1', disk: 30 });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ name: 'patch-me', image: 'busybox', args: 'sleep 1', disk: 30, env: { A: '1' } });
  expect((await call(alice.key, 'PATCH', `/v2/templates/${t.body.id}`, { name: 'base' })).status).toBe(409);
  expect((await call(alice.key, 'PATCH', `/v2/templates/${t.body.id}`, { disk: 0 })).status).toBe(422);
});

test('a pod created with templateId takes the template fields and the body overrides them', async () => {
  const t = await call(alice.key, 'POST', '/v2/templates', {
    name: 'pod-source',
    image: 'tpl-image:1',
    args: 'serve --port 8888',
    disk: 33,
    ports: ['8888/http', '22/tcp'],
    env: { A: '1', B: '2' },
  });
  const pod = await call(alice.key, 'POST', '/v2/pods', { name: 'from-tpl', templateId: t.body.id, gpu: { id: H100 }, env: { B: 'body' }, disk: 40 });
  expect(pod.status, JSON.stringify(pod.body)).toBe(201);
  expect(pod.body).toMatchObject({ image: 'tpl-image:1', args: 'serve --port 8888', disk: 40, ports: ['8888/http', '22/tcp'], env: { A: '1', B: 'body' }, template: t.body.id });
  const other = await call(bob.key, 'POST', '/v2/pods', { name: 'steal', templateId: t.body.id, gpu: { id: H100 } });
  expect(other.status).toBe(422);
});

test('delete is refused (409 IN_USE) while a live pod or an endpoint uses the template', async () => {
  const t = await call(alice.key, 'POST', '/v2/templates', { name: 'in-use', image: 'busybox' });
  const pod = await call(alice.key, 'POST', '/v2/pods', { name: 'user-pod', templateId: t.body.id, gpu: { id: H100 } });
  expect(pod.status).toBe(201);
  const busy = await call(alice.key, 'DELETE', `/v2/templates/${t.body.id}`);
  expect(busy.status).toBe(409);
  expect(busy.body.code).toBe('IN_USE');
  expect(busy.body.detail).toContain(pod.body.id);
  expect((await call(alice.key, 'POST', `/v2/pods/${pod.body.id}/action`, { action: 'stop' })).status).toBe(200);
  expect((await call(alice.key, 'DELETE', `/v2/templates/${t.body.id}`)).status).toBe(409); // stopped still uses it
  expect((await call(alice.key, 'DELETE', `/v2/pods/${pod.body.id}`)).status).toBe(204);

  const ep = await call(alice.key, 'POST', '/v1/endpoints', { templateId: t.body.id, gpuTypeIds: [H100] });
  expect(ep.status).toBe(200);
  expect((await call(alice.key, 'DELETE', `/v2/templates/${t.body.id}`)).status).toBe(409);
  expect((await call(alice.key, 'DELETE', `/v1/endpoints/${ep.body.id}`)).status).toBe(204);

  expect((await call(alice.key, 'DELETE', `/v2/templates/${t.body.id}`)).status).toBe(204);
  expect((await call(alice.key, 'GET', `/v2/templates/${t.body.id}`)).status).toBe(404);
});

test('a read-scoped key can list but not create', async () => {
  const reader = await cp.newAccount('read');
  expect((await call(reader.key, 'GET', '/v2/templates')).status).toBe(200);
  expect((await call(reader.key, 'POST', '/v2/templates', { name: 'nope', image: 'busybox' })).status).toBe(403);
});
