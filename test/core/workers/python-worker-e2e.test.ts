// End to end with the public platform's own worker: an endpoint whose template is the unmodified
// runpod-python worker image (test/harness/worker-images.ts, `runpod.serverless.start`), driven by
// runpod-python's unmodified `runpod.Endpoint` client. The autoscaler starts the worker container
// from zero on a real sshd test host; the worker reaches the control plane at GPUFLEET_WORKER_URL
// (the control plane listens on the docker bridge gateway, as in runsync-e2e.test.ts).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, dockerInspect, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensurePythonWorkerImage } from '../../harness/worker-images.ts';
import { RunpodPythonEndpoint } from '../../api/jobs/runpod-python-endpoint.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { isWorker } from '../../../model/index.ts';
import { waitFor } from '../../harness/wait-for.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let user: { accountId: string; key: string };
let image: string;
let py: RunpodPythonEndpoint;
let endpointId = '';

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });
const op = (o: Parameters<RunpodPythonEndpoint['call']>[0]) => py.call({ endpoint: endpointId, apiKey: user.key, ...o });


beforeAll(async () => {
  image = await ensurePythonWorkerImage();
  host = await startTestHost({ name: `py-e2e-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-py-e2e' });
  user = await cp.newAccount();
  py = await RunpodPythonEndpoint.start(`${cp.url}/v2`);
  const tpl = await json(await asUser('/v2/templates', { method: 'POST', json: { name: 'python-worker', image, disk: 1, serverless: true } }));
  const created = await asUser('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.id, name: 'py-e2e', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 60 },
  });
  const ep = await json(created);
  expect(created.status, JSON.stringify(ep)).toBe(200);
  endpointId = ep.id;
}, 600_000);

afterAll(async () => {
  await py?.close();
  await disposeHostWorld({ cp, host, hostId });
});

test('runpod.Endpoint run_sync on an endpoint with the unmodified runpod-python worker image: COMPLETED with the handler output by a worker container started from zero on a test host', async () => {
  expect((await cp.services.store.list('pods', { endpointId })).length).toBe(0);
  const t0 = Date.now();
  const out = await op({ op: 'run_sync', request: { input: { output: { hello: 'from runpod-python' } } }, timeout: 120 });
  const coldMs = Date.now() - t0;
  expect(out).toEqual({ hello: 'from runpod-python' });

  const workers = (await cp.services.store.list('pods', { endpointId })).filter(isWorker);
  expect(workers).toHaveLength(1);
  expect(workers[0]!.hostId).toBe(hostId);
  const c = await dockerInspect(`gpufleet-${workers[0]!.id}`);
  expect(c?.State.Running).toBe(true);
  expect(c?.Config.Image).toBe(image);

  // the same call over plain HTTP shows the job record: COMPLETED by that worker
  const warm = await json(await asUser(`/v2/${endpointId}/runsync?wait=60000`, { method: 'POST', json: { input: { n: 7 } } }));
  expect(warm).toMatchObject({ status: 'COMPLETED', output: { echo: { n: 7 } }, workerId: workers[0]!.id });
  console.log(`[python-worker-e2e] cold run_sync (python worker started from zero): ${coldMs} ms`);
}, 180_000);

test("a failing runpod-python handler: the job is FAILED with the worker's error (runpod-python's JSON error payload), not retried", async () => {
  const id: string = await op({ op: 'run', request: { input: { fail: 'boom-from-python-handler' } } });
  await waitFor('the job to be final', async () => ['FAILED', 'COMPLETED'].includes(await op({ op: 'status', job: id })), 60_000);
  expect(await op({ op: 'status', job: id })).toBe('FAILED');
  const job = await json(await asUser(`/v2/${endpointId}/status/${id}`));
  expect(job).toMatchObject({ id, status: 'FAILED' });
  expect(job.retries ?? 0).toBe(0);
  expect(typeof job.error).toBe('string');
  const err = JSON.parse(job.error as string) as Record<string, unknown>;
  expect(err).toMatchObject({ error_type: expect.stringContaining('RuntimeError'), error_message: 'boom-from-python-handler' });
  expect(String(err.error_traceback)).toContain('raise RuntimeError(str(inp["fail"]))');
}, 90_000);

test('progress_update from the runpod-python handler is visible in status while the job is IN_PROGRESS, then the job COMPLETES with its output', async () => {
  const id: string = await op({ op: 'run', request: { input: { sleep_ms: 300, progress: ['step 1 of 2'], output: { done: true } } } });
  const seen = await waitFor(
    'status IN_PROGRESS with the progress output',
    async () => {
      const j = await json(await asUser(`/v2/${endpointId}/status/${id}`));
      if (j.status === 'COMPLETED') throw new Error('completed before the progress was seen'); // waitFor treats a throw as not yet
      return j.status === 'IN_PROGRESS' && j.output === 'step 1 of 2' ? j : null;
    },
    30_000,
    40,
  );
  expect(seen).toMatchObject({ id, status: 'IN_PROGRESS', output: 'step 1 of 2' });
  expect(await op({ op: 'output', job: id, timeout: 30 })).toEqual({ done: true });
}, 60_000);

test("a job running across several of the runpod-python worker's pings (every 10 s) stays its own: the pings list it, nothing goes back to the queue, COMPLETED once", async () => {
  const id: string = await op({ op: 'run', request: { input: { sleep_ms: 25_000, output: { long: true } } } });
  await waitFor('the job running', async () => (await json(await asUser(`/v2/${endpointId}/status/${id}`))).status === 'IN_PROGRESS', 30_000, 100);
  // while it runs the worker is RUNNING, and stays the job's holder through the pings
  const ws = (await json(await asUser(`/v2/serverless/${endpointId}/workers`))).workers as { status: string }[];
  expect(ws.map((w) => w.status)).toEqual(['RUNNING']);
  expect(await op({ op: 'output', job: id, timeout: 60 })).toEqual({ long: true });
  const job = await json(await asUser(`/v2/${endpointId}/status/${id}`));
  expect(job).toMatchObject({ status: 'COMPLETED', output: { long: true } });
  expect(job.retries ?? 0).toBe(0);
  expect(job.executionTime).toBeGreaterThanOrEqual(25_000);
}, 90_000);
