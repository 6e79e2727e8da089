// v1 serverless endpoint records: defaults like the public platform, GPU ids and pool ids resolved in
// priority order, PATCH semantics with `version` bumped only by changes that need new workers, the
// saveEndpoint full replace, and the cross-record rules (template, volume, data centers).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { gpuTypesInPool } from '../../fleet/gpu-catalog.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import type { Principal } from '../../model/index.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let templateId = '';
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { gpus: 8, dataCenterId: 'dc-a' },
    { gpus: 8, dataCenterId: 'dc-b' },
  ]);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  const t = await call(alice.key, 'POST', '/v2/templates', { name: 'worker', image: 'worker:1', serverless: true });
  templateId = t.body.id;
});
afterAll(async () => cp?.close());

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: J }> {
  const res = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

test('create answers 200 with the full record and the public defaults', async () => {
  const r = await call(alice.key, 'POST', '/v1/endpoints', { name: 'sd', templateId, gpuTypeIds: ['ADA_24', H100] });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({
    name: 'sd',
    templateId,
    type: 'QUEUE',
    computeType: 'GPU',
    gpuTypeIds: ['ADA_24', H100],
    gpuCount: 1,
    workersMin: 0,
    workersMax: 3,
    idleTimeout: 5,
    scalerType: 'QUEUE_DELAY',
    scalerValue: 4,
    networkVolumeId: null,
    dataCenterIds: [],
    flashboot: false,
    executionTimeoutMs: 600000,
    version: 0,
    userId: alice.accountId,
  });
  expect(r.body.id).toMatch(/^[a-z0-9]{14}$/);
  const ada = gpuTypesInPool('ADA_24').map((t) => t.id);
  expect(ada.length).toBeGreaterThan(0);
  expect(r.body.resolvedGpuTypeIds).toEqual([...ada, H100]);
});

describe('validation', () => {
  test('schema failures are 422 with errors', async () => {
    const r = await call(alice.key, 'POST', '/v1/endpoints', { gpuTypeIds: [], idleTimeout: 0, colour: 'x' });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual(
      expect.arrayContaining(['$.templateId: is required', '$.colour: unknown property', '$.gpuTypeIds: must NOT have fewer than 1 items', '$.idleTimeout: must be >= 1']),
    );
  });

  test('unknown GPU ids and pools, templates, volumes and data centers are 422 naming the field', async () => {
    const r = await call(alice.key, 'POST', '/v1/endpoints', {
      templateId: 'tpl_missing',
      gpuTypeIds: [H100, 'AMPERE_9000'],
      networkVolumeId: 'vol_missing',
      dataCenterIds: ['dc-a', 'dc-zz'],
    });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([
      '$.templateId: template tpl_missing not found',
      '$.gpuTypeIds[1]: unknown GPU type or pool "AMPERE_9000" (see GET /v2/catalog/gpus)',
      '$.dataCenterIds[1]: unknown data center "dc-zz"',
      '$.networkVolumeId: network volume vol_missing not found',
    ]);
  });

  test('workersMin above workersMax is 400', async () => {
    const r = await call(alice.key, 'POST', '/v1/endpoints', { templateId, gpuTypeIds: [H100], workersMin: 4, workersMax: 2 });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['$.workersMin: must be at most workersMax']);
  });

  test("a volume outside dataCenterIds is 400; another account's template is 422", async () => {
    const vol = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'models', size: 20, dataCenterId: 'dc-b' });
    const r = await call(alice.key, 'POST', '/v1/endpoints', { templateId, gpuTypeIds: [H100], networkVolumeId: vol.body.id, dataCenterIds: ['dc-a'] });
    expect(r.status).toBe(400);
    const theirs = await call(bob.key, 'POST', '/v1/endpoints', { templateId, gpuTypeIds: [H100] });
    expect(theirs.status).toBe(422);
  });
});

test('list is a bare array; get embeds the template on request; other accounts get 404', async () => {
  const e = await call(alice.key, 'POST', '/v1/endpoints', { name: 'listed', templateId, gpuTypeIds: [H100] });
  const list = await call(alice.key, 'GET', '/v1/endpoints');
  expect(Array.isArray(list.body)).toBe(true);
  expect(list.body.map((x: J) => x.id)).toContain(e.body.id);
  expect((await call(bob.key, 'GET', '/v1/endpoints')).body).toEqual([]);
  const withTpl = await call(alice.key, 'GET', `/v1/endpoints/${e.body.id}?includeTemplate=true&includeWorkers=true`);
  expect(withTpl.body.template).toMatchObject({ id: templateId, image: 'worker:1' });
  expect(withTpl.body.workers).toEqual([]);
  expect((await call(alice.key, 'GET', `/v1/endpoints/${e.body.id}?includeTemplate=maybe`)).status).toBe(422);
  for (const [m, p, body] of [
    ['GET', `/v1/endpoints/${e.body.id}`, undefined],
    ['PATCH', `/v1/endpoints/${e.body.id}`, { workersMax: 1 }],
    ['POST', `/v1/endpoints/${e.body.id}/update`, { workersMax: 1 }],
    ['DELETE', `/v1/endpoints/${e.body.id}`, undefined],
  ] as const)
    expect((await call(bob.key, m, p, body)).status, `${m} ${p}`).toBe(404);
});

test('PATCH changes only the sent fields; version moves only for changes that need new workers', async () => {
  const e = await call(alice.key, 'POST', '/v1/endpoints', { name: 'patchy', templateId, gpuTypeIds: [H100], env: { A: '1' } });
  const scale = await call(alice.key, 'PATCH', `/v1/endpoints/${e.body.id}`, { workersMax: 5, idleTimeout: 30 });
  expect(scale.status).toBe(200);
  expect(scale.body).toMatchObject({ workersMax: 5, idleTimeout: 30, env: { A: '1' }, version: 0, name: 'patchy' });
  const gpus = await call(alice.key, 'POST', `/v1/endpoints/${e.body.id}/update`, { gpuTypeIds: ['AMPERE_80'] });
  expect(gpus.status).toBe(200);
  expect(gpus.body).toMatchObject({ gpuTypeIds: ['AMPERE_80'], workersMax: 5, version: 1 });
  const bad = await call(alice.key, 'PATCH', `/v1/endpoints/${e.body.id}`, { workersMin: 6 });
  expect(bad.status).toBe(400);
  expect((await call(alice.key, 'GET', `/v1/endpoints/${e.body.id}`)).body.workersMin).toBe(0);
  expect((await call(alice.key, 'PATCH', `/v1/endpoints/${e.body.id}`, { id: 'x' })).status).toBe(422);
});

test('save: without id creates, with id replaces every field (omitted ones take defaults)', async () => {
  const p: Principal = { accountId: alice.accountId, keyId: 'k', scope: 'read_write', operator: false };
  const created = await cp.services.endpoints.save(p, { name: 'saved', templateId, gpuTypeIds: [H100], workersMax: 7, env: { X: '1' } });
  expect(created).toMatchObject({ workersMax: 7, version: 0 });
  const replaced = await cp.services.endpoints.save(p, { id: created.id, templateId, gpuTypeIds: [H100], workersMin: 1 });
  expect(replaced).toMatchObject({ id: created.id, name: 'worker', workersMin: 1, workersMax: 3, env: {}, version: 1, createdAt: created.createdAt });
  const q: Principal = { ...p, accountId: bob.accountId };
  await expect(cp.services.endpoints.save(q, { id: created.id, templateId, gpuTypeIds: [H100] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
});

test('a volume used by an endpoint cannot be deleted until the endpoint is', async () => {
  const vol = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'ep-vol', size: 20, dataCenterId: 'dc-a' });
  const e = await call(alice.key, 'POST', '/v1/endpoints', { templateId, gpuTypeIds: [H100], networkVolumeId: vol.body.id });
  expect(e.status).toBe(200);
  const busy = await call(alice.key, 'DELETE', `/v2/network-volumes/${vol.body.id}`);
  expect(busy.status).toBe(409);
  expect(busy.body.detail).toContain(e.body.id);
  expect((await call(alice.key, 'DELETE', `/v1/endpoints/${e.body.id}`)).status).toBe(204);
  expect((await call(alice.key, 'GET', `/v1/endpoints/${e.body.id}`)).status).toBe(404);
  expect((await call(alice.key, 'DELETE', `/v2/network-volumes/${vol.body.id}`)).status).toBe(204);
});

test('a read-scoped key can list but not create', async () => {
  const reader = await cp.newAccount('read');
  expect((await call(reader.key, 'GET', '/v1/endpoints')).status).toBe(200);
  expect((await call(reader.key, 'POST', '/v1/endpoints', { templateId, gpuTypeIds: [H100] })).status).toBe(403);
});
