// An endpoint whose gpuTypeIds no enrolled host has (the docs' own "NVIDIA L4"): accepted with a
// warning in the answer; the autoscaler's workers for it are THROTTLED with the reason "no enrolled
// host has NVIDIA L4"; its queued jobs show THROTTLED with that reason, and runsync answers at once
// with it instead of waiting out its time. Once a host with the type is enrolled, none of it shows.
// A listening control plane with record-only hosts; the autoscaler ticked by the test.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Autoscaler } from '../../../core/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';

const L4 = 'NVIDIA L4';
const H100 = 'NVIDIA H100 80GB HBM3';
let cp: TestControlPlane;
let user: { accountId: string; key: string };
let templateId = '';

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ id: 'only-h100', gpus: 2 }]);
  user = await cp.newAccount('read_write', 1000);
  templateId = (await call('POST', '/v2/templates', { name: 'l4-worker', image: 'worker:1', serverless: true })).body.id;
});
afterAll(async () => cp?.close());

async function call(method: string, path: string, json?: unknown): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const res = await cp.api(path, { method, key: user.key, ...(json !== undefined ? { json } : {}) });
  return { status: res.status, body: await res.json().catch(() => null), ms: Date.now() - started };
}

test('accepted with a warning; workers THROTTLED with the reason; jobs THROTTLED and runsync answers at once', async () => {
  const created = await call('POST', '/v1/endpoints', { name: 'l4', templateId, gpuTypeIds: [L4], workersMax: 2, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
  expect(created.status).toBe(200);
  expect(created.body.warnings).toEqual([`no enrolled host has ${L4}: no worker can start until one is enrolled (its jobs wait, THROTTLED)`]);
  const id = created.body.id as string;

  const run = await call('POST', `/v2/${id}/run`, { input: { n: 1 } });
  expect(run.body).toEqual({ id: run.body.id, status: 'THROTTLED', reason: `no enrolled host has ${L4}` });
  // runsync: the reason at once (its default wait is 90 s), the job queued all the same
  const sync = await call('POST', `/v2/${id}/runsync`, { input: { n: 2 } });
  expect(sync.status).toBe(200);
  expect(sync.body).toMatchObject({ status: 'THROTTLED', reason: `no enrolled host has ${L4}` });
  expect(sync.ms).toBeLessThan(5000);
  expect((await call('GET', `/v2/${id}/status/${run.body.id}`)).body).toMatchObject({ status: 'THROTTLED', reason: `no enrolled host has ${L4}` });

  // the autoscaler wants workers for the two jobs and can place none: THROTTLED, with the reason
  const scaler = new Autoscaler(cp.services.workers, cp.services.store, cp.services.workers.jobQueue!);
  await scaler.tick();
  const health = await call('GET', `/v2/${id}/health`);
  expect(health.body.workers).toMatchObject({ throttled: 2, ready: 0 });
  expect(health.body.jobs).toMatchObject({ inQueue: 2 });
  const listed = await call('GET', `/v1/endpoints/${id}?includeWorkers=true`);
  expect(listed.body.statusReason).toBe(`2 worker(s) wanted but not started: no enrolled host has ${L4}`);
});

test('a type some host has: no warning for it, nothing THROTTLED; a list with one missing type warns for that one only', async () => {
  const mixed = await call('POST', '/v1/endpoints', { name: 'mixed', templateId, gpuTypeIds: [L4, H100], workersMax: 1 });
  expect(mixed.body.warnings).toEqual([`no enrolled host has ${L4}: workers use the endpoint's other GPU types`]);
  const run = await call('POST', `/v2/${mixed.body.id}/run`, { input: {} });
  expect(run.body.status).toBe('IN_QUEUE');
  expect(run.body.reason).toBeUndefined();
  const h100 = await call('POST', '/v1/endpoints', { name: 'h100', templateId, gpuTypeIds: [H100], workersMax: 1 });
  expect(h100.body.warnings).toBeUndefined();
  // a runsync there waits as it always has (here: its ?wait of 1 s, no worker runs)
  const sync = await call('POST', `/v2/${h100.body.id}/runsync?wait=1000`, { input: {} });
  expect(sync.body.status).toBe('IN_QUEUE');
  expect(sync.ms).toBeGreaterThanOrEqual(900);
});

test('once a host with the type is enrolled, the same jobs show IN_QUEUE again', async () => {
  const e = await call('POST', '/v1/endpoints', { name: 'later', templateId, gpuTypeIds: [L4], workersMax: 1 });
  const run = await call('POST', `/v2/${e.body.id}/run`, { input: {} });
  expect(run.body.status).toBe('THROTTLED');
  await seedHosts(cp.services.store, [{ id: 'l4-host', gpus: 1, gpuName: L4, gpuTypeId: L4 }]);
  expect((await call('GET', `/v2/${e.body.id}/status/${run.body.id}`)).body).toEqual({ id: run.body.id, status: 'IN_QUEUE' });
  const updated = await call('PATCH', `/v1/endpoints/${e.body.id}`, { workersMax: 2 });
  expect(updated.body.warnings).toBeUndefined();
});
