// Issue 20 §2: answers written by the response schemas' serializers (fast-json-stringify, which writes
// only the fields a schema names) are the answers JSON.stringify writes. One server on the control
// plane's services runs the comparison mode (api/schemas/response-serializers.ts): every answer is
// written both ways and compared as JSON values. The fixtures below drive each route that has a
// response schema, with views as full as the suite makes them (a running pod with ports, GPUs, SSH,
// a network volume, tags, an interruptible pod, a drained host with an incident, …), through both
// its success and its refusals: the catalog, health and `/`, a console session, an endpoint's
// workers, the worker protocol as a worker calls it (its own token), and a host diagnose whose
// diagnostic answers from a recorded dcgmi run (the real GpuDiagnostics service, its SSH pool replaced
// by the recording). GraphQL, the only route with no response schema, writes its answers by its own
// type system (docs/validation.md). Then:
//   - no answer differed (a view's field its schema lacks fails here, with the route and the field);
//   - every route and 2xx status that has a response schema was answered at least once: a new route
//     with a response schema fails the test until it is driven here (add it to `drive` below).
// GraphQL declares no response schema: its answers never pass through a serializer.
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildServer } from '../../../api/server.ts';
import type { SerializerMismatch } from '../../../api/schemas/response-serializers.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { GpuDiagnostics } from '../../../core/index.ts';
import type { SshPool } from '../../../fleet/index.ts';
import { StoreWorkerDirectory } from '../jobs/store-worker-directory.ts';
import { enrichHosts, GPU_UUID, makeRunning } from './stored-views.ts';

let cp: TestControlPlane;
let app: FastifyInstance;
let directory: StoreWorkerDirectory;
const mismatches: SerializerMismatch[] = [];
const declared = new Set<string>();
const answered = new Set<string>();

beforeAll(async () => {
  cp = await startTestControlPlane({ config: { proxyDomain: 'pods.example.net', workerPollMs: 300 } as never });
  await seedHosts(cp.services.store, [{ id: 'gpu-1', gpus: 8 }, { id: 'gpu-2', gpus: 8 }, { id: 'cpu-host', gpus: 0 }]);
  directory = new StoreWorkerDirectory(cp.services.store);
  cp.services.workerPorts.register(directory);
  const s = cp.services;
  app = await buildServer({
    // the diagnostic's command answers what dcgmi diag printed on a host: GPU 0 passes, GPU 1 fails
    // (the seeded hosts have no real key, so no SSH target is made for them)
    services: { ...s, gpuDiagnostics: new GpuDiagnostics(s.store, recordedDiagnostic as SshPool, Object.assign(Object.create(s.fleet) as typeof s.fleet, { target: () => ({}) }), s.gpuHealthSignal) },
    serializers: {
      mismatch: (m) => mismatches.push(m),
      declared: (route, status) => void declared.add(`${route} ${status}`),
      answered: (route, status) => void answered.add(`${route} ${status}`),
    },
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await cp?.close();
});

type Json = Record<string, unknown>;

/** dcgmi diag's JSON as the host printed it (fleet/gpu-diagnostic.ts reads it) */
const DCGMI_RUN = `@@method dcgmi\n${JSON.stringify({ 'DCGM GPU Diagnostic': { test_categories: [{ category: 'Hardware', tests: [{ name: 'GPU Memory', results: [{ gpu_id: '0', status: 'Pass' }, { gpu_id: '1', status: 'Fail', warnings: [{ warning: 'DBE detected' }] }] }] }] } })}\n@@rc 226`;
const recordedDiagnostic: Pick<SshPool, 'exec'> = { exec: async () => ({ stdout: DCGMI_RUN, stderr: '', code: 226 }) };

/** `headers` as sent: a Bearer key (or none), a worker's raw token, a console cookie */
async function call(method: InjectOptions['method'], url: string, body?: unknown, key: string | null = cp.adminKey, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; headers: Record<string, unknown> }> {
  const res = await app.inject({
    method,
    url,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  const text = res.body;
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Json) : {}, headers: res.headers };
}

async function ok(method: InjectOptions['method'], url: string, body?: unknown, key?: string | null, headers?: Record<string, string>): Promise<Json> {
  const r = await call(method, url, body, key, headers);
  expect(r.status, `${method} ${url}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

test('every route with a response schema answers the same with serializers on and off', async () => {
  const user = await cp.newAccount('read_write', 500);
  const gpu = { id: 'NVIDIA H100 80GB HBM3', count: 2 };

  // pods: create (201, with a dry run's 200), list, get, update, actions, delete, refusals
  const volume = await ok('POST', '/v2/network-volumes', { name: 'data', size: 50, dataCenterId: 'dc-test-1' }, user.key);
  await ok('GET', '/v2/network-volumes', undefined, user.key);
  await ok('GET', `/v2/network-volumes/${volume.id}`, undefined, user.key);
  await ok('PATCH', `/v2/network-volumes/${volume.id}`, { size: 80, tags: { team: 'ml' } }, user.key);
  const full = await ok('POST', '/v2/pods', {
    name: 'full', image: 'ghcr.io/example/trainer:2024.05', gpu, ports: ['8888/http', '22/tcp'], env: { A: '1', MULTI: 'line\nbreak' },
    mounts: { persistent: { size: 100, path: '/workspace' } }, tags: { stack: 's1', 'construct/path': 'a/b' }, args: 'python train.py',
  }, user.key);
  await makeRunning(cp, String(full.id));
  const net = await ok('POST', '/v2/pods', { name: 'net', image: 'busybox', gpu: { id: gpu.id, count: 1 }, mounts: { network: [{ volumeId: volume.id, path: '/data' }] } }, user.key);
  const spot = await ok('POST', '/v2/pods', { name: 'spot', image: 'busybox', gpu: { id: gpu.id, count: 1 }, interruptible: true, bidPerGpu: 2.5 }, user.key);
  const cpu = await ok('POST', '/v2/pods', { name: 'cpu', image: 'busybox', cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, globalNetworking: true }, user.key);
  await ok('POST', '/v2/pods?dryRun=true', { name: 'dry', image: 'busybox', gpu }, user.key);
  await ok('GET', '/v2/pods', undefined, user.key);
  await ok('GET', '/v2/pods?includeTerminated=true', undefined, user.key);
  for (const p of [full, net, spot, cpu]) await ok('GET', `/v2/pods/${p.id}`, undefined, user.key);
  await ok('PATCH', `/v2/pods/${full.id}`, { name: 'full-renamed', tags: { stack: 's2' } }, user.key);
  await ok('POST', `/v2/pods/${spot.id}/action`, { action: 'stop' }, user.key);
  await ok('POST', `/v2/pods/${cpu.id}/action`, { action: 'terminate' }, user.key);
  await ok('GET', '/v2/pods?includeTerminated=true', undefined, user.key);
  const refused = await call('POST', '/v2/pods', { name: 'bad', image: 'busybox', gpu: { id: gpu.id, count: 'two' }, extra: 1 }, user.key);
  expect(refused.status).toBe(422);
  expect((await call('GET', '/v2/pods/nope', undefined, user.key)).status).toBe(404);
  expect((await call('GET', '/v2/pods', undefined, null)).status).toBe(401);
  const extra = await ok('POST', '/v2/pods', { name: 'gone', image: 'busybox', gpu: { id: gpu.id, count: 1 } }, user.key);
  await ok('DELETE', `/v2/pods/${extra.id}`, undefined, user.key);

  // SSH keys, exec ticket and port link (the latter two need a running pod; their refusals count too)
  const pubKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGj0ZbmTg3DPbZ1hnP9cGxTnsAmK1n+8dC1dP2B7Jrsq me@laptop';
  await ok('PUT', '/v2/account/ssh-keys', { keys: [pubKey] }, user.key);
  await ok('GET', '/v2/account/ssh-keys', undefined, user.key);
  await call('POST', `/v2/pods/${full.id}/exec/ticket`, {}, user.key);
  await call('POST', `/v2/pods/${full.id}/ports/8888/link`, { path: '/lab' }, user.key);
  await call('POST', `/v2/pods/${full.id}/exec`, { command: ['true'] }, user.key);

  // events
  await ok('GET', '/v2/events', undefined, user.key);
  await ok('GET', '/v2/events?limit=5', undefined, cp.adminKey);

  // hosts (operator): one, drained with a deadline, GPU cleared, lost
  await enrichHosts(cp);
  const hosts = await ok('GET', '/v2/hosts');
  const h = (hosts.hosts as Json[])[0]!;
  await ok('GET', `/v2/hosts/${h.id}`);
  await ok('POST', '/v2/hosts/gpu-2/drain', { drained: true, deadline: '1h' });
  await ok('GET', '/v2/hosts/gpu-2');
  await ok('POST', `/v2/hosts/gpu-1/gpus/${GPU_UUID}/clear`, { reason: 'checked by hand' });
  await ok('GET', '/v2/hosts/gpu-1');
  await ok('POST', '/v2/hosts/cpu-host/lost', undefined);
  // back to the default overlay address (null reaches no host; an address is checked on the host over SSH)
  await ok('PATCH', '/v2/hosts/gpu-2', { overlayAddress: null });
  await ok('GET', '/v2/hosts');
  const diagnosed = await ok('POST', '/v2/hosts/gpu-1/diagnose', {});
  expect((diagnosed.gpus as Json[]).map((g) => g.passed)).toEqual([true, false, true, true, true, true, true, true]);
  await ok('POST', `/v2/hosts/gpu-1/diagnose`, { gpu: GPU_UUID, level: 2 });
  expect((await call('POST', '/v2/hosts/nope/diagnose', {})).status).toBe(404);
  // a host's GPU metrics (docs/gpu-metrics.md): polls with every field, one with [N/A]s (nulls), a GPU never polled
  cp.services.gpuUsage.sampling('gpu-1', true);
  cp.services.gpuUsage.record('gpu-1', [{ uuid: GPU_UUID, values: { 'utilization.gpu': 42, 'memory.used': 2048, 'memory.total': 81559, 'temperature.gpu': 51, 'power.draw': 312.5 } }], Date.now() - 15_000);
  cp.services.gpuUsage.record('gpu-1', [{ uuid: GPU_UUID, values: { 'utilization.gpu': null, 'memory.used': 4096, 'memory.total': 81559, 'temperature.gpu': null, 'power.draw': null } }]);
  await ok('GET', '/v2/hosts/gpu-1/metrics?step=10s');
  await ok('GET', '/v2/hosts/gpu-2/metrics');

  // registries, stack locks, public endpoints
  const reg = await ok('POST', '/v2/registries', { name: 'ghcr', username: 'me', password: 'secret' }, user.key);
  await ok('GET', '/v2/registries', undefined, user.key);
  await ok('GET', `/v2/registries/${reg.id}`, undefined, user.key);
  await ok('PATCH', `/v2/registries/${reg.id}`, { password: 'rotated' }, user.key);
  await ok('POST', '/v2/stack-locks/main', { holder: 'ci-1' }, user.key);
  await ok('GET', '/v2/stack-locks/main', undefined, user.key);
  await ok('DELETE', '/v2/stack-locks/main?holder=ci-1', undefined, user.key);
  const tpl = await ok('POST', '/v2/templates', { name: 'srv', image: 'ghcr.io/example/worker:1', serverless: true }, cp.adminKey);
  const podTpl = await ok('POST', '/v2/templates', {
    name: 'notebook', image: 'ghcr.io/example/nb:2', args: 'jupyter lab', disk: 30, ports: ['8888/http'], env: { TOKEN: 'x' }, mounts: { persistent: { size: 20, path: '/workspace' } },
    category: 'NVIDIA', startJupyter: true, allowedCudaVersions: ['12.4'], readme: '# nb', tags: { team: 'ml' },
  }, user.key);
  await ok('GET', '/v2/templates', undefined, user.key);
  await ok('GET', '/v2/templates?includePublic=true', undefined, user.key);
  await ok('GET', `/v2/templates/${podTpl.id}`, undefined, user.key);
  await ok('PATCH', `/v2/templates/${podTpl.id}`, { readme: 'updated', ports: ['8888/http', '22/tcp'] }, user.key);
  const ep = await ok('POST', '/v1/endpoints', { name: 'model-ep', templateId: tpl.id, gpuTypeIds: [gpu.id], workersMax: 1 }, cp.adminKey);
  await ok('GET', `/v2/serverless/${ep.id}/metrics`, undefined, cp.adminKey);
  await ok('GET', `/v2/serverless/${ep.id}/metrics?step=5m`, undefined, cp.adminKey);
  await driveServerlessV2(tpl, gpu.id);
  await driveEndpointsV1(tpl, gpu.id);
  await driveKeysAndLimits(user.accountId);
  await driveAccounts(user);
  await driveJobs(String(ep.id));
  await driveWorkers(String(ep.id), user);
  await driveWorkerProtocol(String(ep.id));
  await driveCatalogAndHealth(gpu.id);
  await driveConsoleSession(user.key);
  await driveBilling(user, String(full.id), String(volume.id), String(ep.id));
  await call('POST', '/v2/public-endpoints', { slug: 'test-model', endpointId: ep.id, name: 'Test model', description: 'a fixture', pricing: { unit: 'image', usdPerUnit: 0.0031, maxUnitsPerJob: 20 } });
  await ok('GET', '/v2/public-endpoints', undefined, user.key);
  await ok('GET', '/v2/public-endpoints', undefined, cp.adminKey);
  await call('GET', '/v2/public-endpoints/test-model', undefined, user.key);
  await call('DELETE', '/v2/public-endpoints/test-model');

  expect(mismatches, JSON.stringify(mismatches.map(describe), null, 1)).toEqual([]);
  const notDriven = [...declared].filter((d) => /^(GET|POST|PUT|PATCH|DELETE) .* 2\d\d$/.test(d) && !answered.has(d) && !UNDRIVEN.has(d));
  expect(notDriven, 'routes with a response schema that this test does not drive').toEqual([]);
});

/** API keys (one expiring, one revoked, one used) and an account's limits (set, per GPU type, cleared) beside its use */
async function driveKeysAndLimits(accountId: string): Promise<void> {
  const expiring = await ok('POST', '/v2/keys', { name: 'ci', scope: 'read', expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
  const other = await ok('POST', '/v2/keys', { name: 'tenant-admin', scope: 'admin', accountId });
  await ok('GET', '/v2/events', undefined, String(expiring.key)); // lastUsedAt set
  await ok('DELETE', `/v2/keys/${other.id}`);
  await ok('GET', '/v2/keys');
  await ok('GET', `/v2/keys?accountId=${accountId}`);
  expect((await call('DELETE', '/v2/keys/nope')).status).toBe(404);
  await ok('GET', `/v2/accounts/${accountId}/limits`);
  await ok('PATCH', `/v2/accounts/${accountId}/limits`, { gpus: 8, gpusByType: { 'NVIDIA H100 80GB HBM3': 4 }, pods: 10, spendPerHour: 12.5, monthlyBudget: 1000, budgetAction: 'stop' });
  await ok('GET', `/v2/accounts/${accountId}/limits`);
  await ok('PATCH', `/v2/accounts/${accountId}/limits`, { gpus: null, gpusByType: null, budgetAction: null });
  expect((await call('PATCH', `/v2/accounts/${accountId}/limits`, { gpus: -1 })).status).toBe(422);
}

/** accounts: created, listed (one with limits, a budget alert, an SSH key, an overlay VNI), the caller's own with its balance, credits granted */
async function driveAccounts({ accountId, key }: { accountId: string; key: string }): Promise<void> {
  await cp.services.store.transact(async (tx) => {
    const a = (await tx.get('accounts', accountId))!;
    tx.put('accounts', { ...a, overlayVni: 4242, budgetAlert: { month: '2026-11', percent: 80, spent: 812.5, budget: 1000, at: new Date().toISOString() } });
  });
  await ok('PATCH', `/v2/accounts/${accountId}/limits`, { gpus: 4, gpusByType: { 'NVIDIA H100 80GB HBM3': 2 }, monthlyBudget: 1000, budgetAction: 'keep' });
  await ok('POST', '/v2/accounts', { email: 'new@example.com', name: 'New', balance: 10 });
  await ok('GET', '/v2/accounts');
  await ok('GET', '/v2/account', undefined, key);
  await ok('GET', '/v2/account');
  await ok('POST', `/v2/accounts/${accountId}/credits`, { amount: 25.5 });
  await ok('GET', '/v2/account', undefined, key);
  expect((await call('POST', '/v2/accounts/nope/credits', { amount: 1 })).status).toBe(404);
}

/** billing: stretches of a pod (closed and open), a volume, an endpoint's worker and a public model's charges, over hour and day buckets, one resource and none */
async function driveBilling({ accountId, key }: { accountId: string; key: string }, podId: string, volumeId: string, endpointId: string): Promise<void> {
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const halfHourAgo = new Date(Date.now() - 1_800_000).toISOString();
  const base = { accountId, gpuTypeId: null, rate: 0, gpuRate: 0, cpuRate: 0, diskRate: 0, startedAt: hourAgo, endedAt: null };
  await cp.services.store.transact(async (tx) => {
    tx.put('billing', { ...base, id: 'bill-pod-1', kind: 'pod', resourceId: podId, gpuTypeId: 'NVIDIA H100 80GB HBM3', rate: 5.98, gpuRate: 5.38, cpuRate: 0.4, diskRate: 0.2, endedAt: halfHourAgo });
    tx.put('billing', { ...base, id: 'bill-pod-2', kind: 'pod', resourceId: podId, rate: 0.2, diskRate: 0.2, startedAt: halfHourAgo });
    tx.put('billing', { ...base, id: 'bill-vol', kind: 'networkVolume', resourceId: volumeId, rate: 0.007, diskRate: 0.007 });
    tx.put('billing', { ...base, id: 'bill-ep', kind: 'endpoint', resourceId: endpointId, podId: 'worker-1', gpuTypeId: 'NVIDIA H100 80GB HBM3', rate: 2.99, gpuRate: 2.99 });
    tx.put('billing', { ...base, id: 'bill-pub', kind: 'public-endpoint', resourceId: 'test-model', amountMicros: 3100, jobId: 'job-1', units: 1, startedAt: halfHourAgo, endedAt: halfHourAgo });
  });
  await ok('GET', '/v2/billing/pods', undefined, key);
  await ok('GET', `/v2/billing/pods?bucketSize=hour&podId=${podId}`, undefined, key);
  await ok('GET', '/v2/billing/network-volumes?bucketSize=hour', undefined, key);
  await ok('GET', '/v2/billing/endpoints?bucketSize=hour', undefined, key);
  await ok('GET', `/v2/billing/serverless?serverlessId=${endpointId}`, undefined, key);
  await ok('GET', `/v2/billing/pods?startTime=${encodeURIComponent(hourAgo)}&endTime=${encodeURIComponent(halfHourAgo)}`, undefined, key);
  expect((await call('GET', '/v2/billing/pods?bucketSize=minute', undefined, key)).status).toBe(422);
}

/** v1 endpoints: create (with a warning for a GPU type no host has), list and get with the template and the workers, both updates */
async function driveEndpointsV1(tpl: Json, gpuId: string): Promise<void> {
  const e = await ok('POST', '/v1/endpoints', {
    name: 'v1-full', templateId: tpl.id, gpuTypeIds: [gpuId, 'NVIDIA A100 80GB PCIe'], gpuCount: 2, workersMin: 0, workersMax: 2, idleTimeout: 30,
    scalerType: 'REQUEST_COUNT', scalerValue: 3, dataCenterIds: ['dc-test-1'], flashboot: true, executionTimeoutMs: 60000, allowedCudaVersions: ['12.4'], env: { A: '1' }, tags: { team: 'ml' },
  });
  await ok('GET', '/v1/endpoints');
  await ok('GET', '/v1/endpoints?includeTemplate=true&includeWorkers=true');
  await ok('GET', `/v1/endpoints/${e.id}?includeTemplate=true&includeWorkers=true`);
  await ok('PATCH', `/v1/endpoints/${e.id}`, { workersMax: 3 });
  await ok('POST', `/v1/endpoints/${e.id}/update`, { idleTimeout: 60 });
  expect((await call('GET', '/v1/endpoints/nope')).status).toBe(404);
}

/** v2 endpoints: one on a template (QUEUE), one from container fields (LOAD_BALANCER, registry, tags, env) */
async function driveServerlessV2(tpl: Json, gpuId: string): Promise<void> {
  const queue = await ok('POST', '/v2/serverless', { name: 'v2-queue', type: 'QUEUE', templateId: tpl.id, scaling: { type: 'QUEUE_DELAY', queueDelay: 4 }, gpu: { pools: [gpuId] } });
  const reg = await ok('POST', '/v2/registries', { name: 'v2-reg', username: 'u', password: 'p' });
  const lb = await ok('POST', '/v2/serverless', {
    name: 'v2-lb', type: 'LOAD_BALANCER', image: 'ghcr.io/example/srv:3', args: 'serve --port 8000', disk: 25, ports: ['8000/http'], registry: reg.id,
    scaling: { type: 'REQUEST_COUNT', requestCount: 3 }, gpu: { pools: [gpuId], count: 2, allowedCudaVersions: ['12.4'] }, dataCenterIds: ['dc-test-1'],
    flashboot: 'FLASHBOOT', timeout: 60000, workers: { min: 0, max: 2, idleTimeout: 30 }, env: { MODEL: 'x' }, tags: { team: 'ml' },
  });
  await ok('GET', '/v2/serverless');
  await ok('GET', `/v2/serverless/${queue.id}`);
  await ok('GET', `/v2/serverless/${lb.id}`);
  await ok('PATCH', `/v2/serverless/${queue.id}`, { workers: { max: 3 }, tags: { stage: 'prod' } });
  expect((await call('GET', '/v2/serverless/nope')).status).toBe(404);
}

/** the job interface: outputs of every JSON kind (an object, an array, a string, a number, null, none), progress and stream chunks, a failure, retry, cancel, runsync past its wait, purge, health */
async function driveJobs(ep: string): Promise<void> {
  const q = cp.services.jobQueue;
  const worker = 'w-onoff';
  const takeOne = async () => (await q.take(ep, worker, { waitMs: 5000 }))[0]!;
  const outputs: unknown[] = [{ text: 'hi', nested: { list: [1, 2.5, null, 'x'] } }, [1, 'two', { three: 3 }], 'plain string', 42.5, 0, null, {}, [], undefined];
  for (const output of outputs) {
    const run = await ok('POST', `/v2/${ep}/run`, { input: { prompt: 'p' } });
    const job = await takeOne();
    expect(job.id).toBe(run.id);
    await q.complete(job.id, worker, output === undefined ? {} : { output });
    await ok('GET', `/v2/${ep}/status/${job.id}`);
    await ok('GET', `/v2/${ep}/status-sync/${job.id}?wait=1000`);
  }
  // progress, stream chunks, then a failure; retry puts it back (retries: 1), cancel ends it
  const run = await ok('POST', `/v2/${ep}/run`, { input: { n: 1 }, policy: { ttl: 600000 } });
  const job = await takeOne();
  await q.progress(job.id, worker, { pct: 50 });
  await q.appendStream(job.id, worker, { token: 'a' });
  await q.appendStream(job.id, worker, 'b');
  await ok('GET', `/v2/${ep}/status/${run.id}?ttl=600000`);
  await ok('GET', `/v2/${ep}/stream/${run.id}`);
  await q.complete(job.id, worker, { error: 'handler raised ValueError' });
  await ok('GET', `/v2/${ep}/status/${run.id}`);
  await ok('GET', `/v2/${ep}/stream/${run.id}`);
  await ok('POST', `/v2/${ep}/retry/${run.id}`);
  await ok('GET', `/v2/${ep}/status/${run.id}`);
  await ok('POST', `/v2/${ep}/cancel/${run.id}`);
  // runsync that ends past its wait answers the job as it stands; purge removes it
  const waited = await ok('POST', `/v2/${ep}/runsync?wait=1000`, { input: { slow: true } });
  expect(waited.status).toBe('IN_QUEUE');
  await ok('GET', `/v2/${ep}/health`);
  await ok('POST', `/v2/${ep}/purge-queue`);
  await ok('GET', `/v2/${ep}/health`);
  expect((await call('GET', `/v2/${ep}/status/nope`)).status).toBe(404);
  // the job history: every kind of output, an error, a retried and cancelled job, with and without bodies, a page with a cursor
  await ok('GET', `/v2/serverless/${ep}/jobs?include=input,output,error&limit=100`);
  const page = await ok('GET', `/v2/serverless/${ep}/jobs?limit=2`);
  await ok('GET', `/v2/serverless/${ep}/jobs?status=COMPLETED,FAILED&cursor=${encodeURIComponent(String(page.nextCursor))}`);
  expect((await call('GET', `/v2/serverless/${ep}/jobs?limit=0`)).status).toBe(400);
}

/** the catalog, the health routes and `/` */
async function driveCatalogAndHealth(gpuId: string): Promise<void> {
  await ok('GET', '/v2/catalog/gpus');
  await ok('GET', `/v2/catalog/gpus/${encodeURIComponent(gpuId)}`);
  expect((await call('GET', '/v2/catalog/gpus/nope')).status).toBe(404);
  await ok('GET', '/v2/catalog/cpus');
  await ok('GET', '/v2/catalog/datacenters');
  await ok('GET', '/healthz', undefined, null);
  await ok('GET', '/readyz', undefined, null);
  // not ready: the 503 problem with every check's answer
  cp.services.readiness.set('on-off-test', () => 'held down by the test');
  const notReady = await call('GET', '/readyz', undefined, null);
  expect([notReady.status, (notReady.body.checks as Json)['on-off-test']]).toEqual([503, 'held down by the test']);
  cp.services.readiness.set('on-off-test', () => null);
  await ok('GET', '/', undefined, null);
}

/** the console: signed in with a key (204), who the session is, signed out (204) */
async function driveConsoleSession(key: string): Promise<void> {
  const signIn = await call('POST', '/console/session', { apiKey: key }, null);
  expect(signIn.status).toBe(204);
  const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  const who = await ok('GET', '/console/session', undefined, null, { cookie });
  expect((await call('GET', '/console/session', undefined, key)).status).toBe(401);
  expect((await call('DELETE', '/console/session', undefined, null, { cookie, 'x-csrf-token': String(who.csrfToken) })).status).toBe(204);
}

/** an endpoint's workers: one serving a job (RUNNING, on a host), one starting (no host yet), one stale */
async function driveWorkers(endpointId: string, user: { key: string }): Promise<void> {
  const now = new Date().toISOString();
  await cp.services.store.transact(async (tx) => {
    const base = (await tx.list('pods', {})).find((p) => p.status === 'RUNNING' && p.gpu)!;
    // on a host, but holding none of its GPUs (the PostgreSQL store counts and claims what a pod holds)
    const worker = (id: string, version: number, running: boolean) => ({
      ...base, id, name: `worker ${id}`, endpointId, gpu: { ...base.gpu!, count: 1 }, status: running ? 'RUNNING' as const : 'PROVISIONING' as const, startedAt: running ? now : null,
      gpuUuids: [], allocated: false, ...(running ? {} : { hostId: null }),
      worker: { version, tokenHash: 'f'.repeat(64), tokenSealed: 'sealed', readyAt: running ? now : null, retiredReason: null, failed: false },
    });
    tx.put('pods', worker('wk-run', 1, true));
    tx.put('pods', worker('wk-start', 1, false));
    tx.put('pods', worker('wk-stale', 0, true));
  });
  const listed = await ok('GET', `/v2/serverless/${endpointId}/workers`);
  expect((listed.workers as Json[]).length).toBeGreaterThanOrEqual(3);
  await ok('GET', `/v1/endpoints/${endpointId}?includeWorkers=true`);
  await ok('GET', '/v1/endpoints?includeWorkers=true&includeTemplate=true');
  expect((await call('GET', `/v2/serverless/${endpointId}/workers`, undefined, user.key)).status).toBe(404);
}

/** the worker protocol as a runpod-python worker calls it: its raw token, JSON labelled as a form */
async function driveWorkerProtocol(endpointId: string): Promise<void> {
  const w = await directory.issue(endpointId);
  const P = `/v2/${endpointId}`;
  const worker = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    app.inject({ method, url: P + path, headers: { authorization: w.token, 'content-type': 'application/x-www-form-urlencoded' }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
  const s3Config = { accessId: 'AKIA', accessSecret: 'secret', bucketName: 'out', endpointUrl: 'https://s3.example.net', objectPath: 'jobs/' };
  await ok('POST', `${P}/purge-queue`);
  const a = await ok('POST', `${P}/run`, { input: { prompt: 'a', list: [1, null] }, s3Config });
  const taken = await worker('GET', `/job-take/${w.workerId}?gpu=x&job_in_progress=0`);
  expect([taken.statusCode, taken.body]).toEqual([200, JSON.stringify({ id: a.id, input: { prompt: 'a', list: [1, null] }, s3Config })]);
  for (const input of ['text', 7, [1, 2]]) await ok('POST', `${P}/run`, { input });
  const batch = await worker('GET', `/job-take-batch/${w.workerId}?gpu=x&batch_size=2&job_in_progress=1`);
  expect(batch.statusCode).toBe(200);
  const ids = (JSON.parse(batch.body) as Json[]).map((j) => j.id);
  const rest = await worker('GET', `/job-take-batch/${w.workerId}?batch_size=5`);
  ids.push(...(JSON.parse(rest.body) as Json[]).map((j) => j.id));
  expect(ids).toHaveLength(3);
  expect((await worker('GET', `/job-take/${w.workerId}?gpu=x`)).statusCode).toBe(204);
  expect((await worker('POST', `/job-stream/${w.workerId}/${ids[0]}`, { output: { token: 'x' } })).body).toBe('{}');
  expect((await worker('GET', `/ping/${w.workerId}?job_id=${ids.join(',')}`)).body).toBe('{}');
  expect((await worker('POST', `/job-done/${w.workerId}/${ids[0]}`, { status: 'IN_PROGRESS', output: { pct: 5 } })).body).toBe(JSON.stringify({ id: ids[0], status: 'IN_PROGRESS' }));
  expect((await worker('POST', `/job-done/${w.workerId}/${ids[0]}?isStream=false`, { output: 'done' })).body).toBe(JSON.stringify({ id: ids[0], status: 'COMPLETED' }));
  expect((await worker('POST', `/job-done/${w.workerId}/${a.id}`, { error: 'boom' })).body).toBe(JSON.stringify({ id: a.id, status: 'FAILED' }));
  await ok('POST', `${P}/cancel/${ids[1]}`);
  const stop = await worker('GET', `/job-stop/${w.workerId}`);
  expect([stop.statusCode, stop.body]).toEqual([200, JSON.stringify({ jobsToStop: [ids[1]] })]);
  expect((await worker('POST', `/job-done/${w.workerId}/${ids[1]}`, { output: 'late' })).statusCode).toBe(409);
  await worker('POST', `/job-done/${w.workerId}/${ids[2]}`, { output: null });
  expect((await worker('GET', `/job-stop/${w.workerId}`)).statusCode).toBe(204);
  expect((await worker('GET', `/ping/${w.workerId}?status=unhealthy&check=disk&reason=full`)).body).toBe('{}');
}

/**
 * Routes and statuses answered with no JSON body, or only as a stream, so no serializer runs (a 204,
 * an SSE stream), or that need what this test has not (an exec runner): named, so any other is driven.
 */
const UNDRIVEN = new Set([
  'DELETE /v2/pods/:id 204',
  'POST /v2/pods/:id/action 204',
  'DELETE /v2/stack-locks/:stack 204',
  'DELETE /v2/public-endpoints/:slug 204',
  'POST /console/session 204',
  'DELETE /console/session 204',
  // a long poll that ended with nothing (driven above: the 204s come)
  'GET /v2/:endpointId/job-take/:workerId 204',
  'GET /v2/:endpointId/job-take-batch/:workerId 204',
  'GET /v2/:endpointId/job-stop/:workerId 204',
  'GET /v2/pods/:id/logs 200',
  'GET /v2/serverless/:id/workers/:workerId/logs 200',
  // bytes in the object's own content type: no serializer runs (test/api/media*.test.ts drive it)
  'GET /v2/media/:key 200',
  'GET /v2/media/:key 206',
  // the provisioner runs commands: this control plane has none (test/api/pods-exec*.test.ts drive them)
  'POST /v2/pods/:id/exec 200',
  'POST /v2/pods/:id/exec/ticket 201',
  // these reach the host over SSH; they answer hostView() like GET /v2/hosts/{id}, driven above
  'POST /v2/hosts 201',
  'POST /v2/hosts/:id/refresh 200',
  'POST /v2/hosts/:id/accept-host-key 200',
]);

/** the first place two answers part, as a JSON path */
function firstDifference(a: unknown, b: unknown, at = '$'): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b))
    return `${at}: serializer ${JSON.stringify(a)?.slice(0, 120)}, JSON.stringify ${JSON.stringify(b)?.slice(0, 120)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const d = firstDifference((a as Json)[k], (b as Json)[k], Array.isArray(a) ? `${at}[${k}]` : `${at}.${k}`);
    if (d) return d;
  }
  return `${at}: differs`;
}

function describe(m: SerializerMismatch): string {
  return `${m.route} ${m.status}: ${firstDifference(m.fast, m.plain)}`;
}
