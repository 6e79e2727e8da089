// Fault: the control plane (`gpufleet serve` as a child process) is SIGKILLed while a worker
// container holds a job on a real test host, then restarted on the same port and data directory.
// Each case runs with the Node worker image (the TypeScript worker SDK) and with the unmodified
// runpod-python worker image.
// 1. The worker finishes after the restart: its late job-done for the job it still holds under its
//    lease is accepted. The job is COMPLETED once with the worker's output; it was taken once and
//    never went back to the queue (not run a second time after the 30 s lease).
// 2. The worker finishes while the control plane is down: its job-done fails and is not retried
//    past the SDK's three attempts (runpod-python's FibonacciRetry, and the TypeScript SDK alike). After the restart the worker asks
//    for work with job_in_progress=0, so the job goes back to the queue at once (retry counted)
//    rather than after its lease, and runs again: COMPLETED once, with one requeue in the log.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort, spawnControlPlane, spawnedAdminApi, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensureNodeWorkerImage, ensurePythonWorkerImage } from '../../harness/worker-images.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { jobRecords } from './job-log.ts';

let h: TestHost;
let dataDir: string;
let port = 0;
let gateway = '';
let cp: SpawnedControlPlane | null = null;
let hostId = '';
/** one endpoint per worker image */
const endpoints: Record<'node' | 'python', string> = { node: '', python: '' };
let endpointId = '';

const api = spawnedAdminApi(() => cp);

const spawn = async () =>
  (cp = await spawnControlPlane({
    dataDir,
    port,
    env: { HOST: '0.0.0.0', GPUFLEET_WORKER_URL: `http://${gateway}:${port}`, GPUFLEET_RECONCILE_INTERVAL_MS: '300' },
  }));

const statusOf = async (id: string) => (await api(`/v2/${endpointId}/status/${id}`)).body!;

async function running(id: string): Promise<Record<string, any>> {
  return waitFor('the job running on a worker', async () => {
    const j = await statusOf(id);
    return j.status === 'IN_PROGRESS' ? j : null;
  }, 180_000, 100);
}

async function final(id: string): Promise<Record<string, any>> {
  return waitFor('the job final', async () => {
    const j = await statusOf(id);
    return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(j.status as string) ? j : null;
  }, 120_000, 200);
}

beforeAll(async () => {
  const images = { node: await ensureNodeWorkerImage(), python: await ensurePythonWorkerImage() };
  gateway = await dockerBridgeGateway();
  h = await startTestHost({ name: `cp-down-done-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-down-done-'));
  port = await freePort();
  await spawn();
  hostId = await enrolTestHost(cp!, h, { dataCenterId: 'dc-cp-down' });
  for (const kind of ['node', 'python'] as const) {
    const tpl = await api('/v2/templates', { method: 'POST', json: { name: `${kind}-worker`, image: images[kind], disk: 1, serverless: true } });
    expect(tpl.status, JSON.stringify(tpl.body)).toBeLessThan(300);
    const ep = await api('/v1/endpoints', {
      method: 'POST',
      json: { templateId: tpl.body!.id, name: `cp-down-${kind}`, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 300 },
    });
    expect(ep.status, JSON.stringify(ep.body)).toBe(200);
    endpoints[kind] = ep.body!.id as string;
  }
}, 600_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host: h, hostId });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe.each(['node', 'python'] as const)('%s worker', (kind) => {
beforeAll(() => {
  endpointId = endpoints[kind];
});

test("SIGKILL while a worker holds a job, restart, then the worker's job-done: accepted, COMPLETED once with its output, never run again", async () => {
  const r = await api(`/v2/${endpointId}/run`, { method: 'POST', json: { input: { sleep_ms: 15_000, output: { late: 'from the worker' } } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const id = r.body!.id as string;
  const taken = await running(id);
  await new Promise((res) => setTimeout(res, 1000));
  await cp!.kill('SIGKILL');
  expect(cp!.proc.signalCode).toBe('SIGKILL');
  const recsAtKill = await jobRecords(dataDir, id);
  expect(recsAtKill.filter((x) => x.t === 'take')).toHaveLength(1);
  expect(recsAtKill.some((x) => x.t === 'fin')).toBe(false);
  await spawn();
  // the job is still the worker's after the restart, then its result arrives
  expect(await statusOf(id)).toMatchObject({ status: 'IN_PROGRESS', workerId: taken.workerId });
  const done = await final(id);
  expect(done).toMatchObject({ id, status: 'COMPLETED', output: { late: 'from the worker' }, workerId: taken.workerId });
  expect(done.retries ?? 0).toBe(0);
  expect(done.executionTime).toBeGreaterThanOrEqual(15_000);
  const recs = await jobRecords(dataDir, id);
  expect(recs.filter((x) => x.t === 'take'), 'takes').toHaveLength(1);
  expect(recs.filter((x) => x.t === 'rq'), 'requeues').toEqual([]);
  expect(recs.filter((x) => x.t === 'fin')).toEqual([expect.objectContaining({ status: 'COMPLETED', output: { late: 'from the worker' } })]);
}, 300_000);

test('the job-done lost while the control plane was down: after restart the job goes back to the queue at once (job_in_progress=0), runs again, COMPLETED once', async () => {
  const r = await api(`/v2/${endpointId}/run`, { method: 'POST', json: { input: { sleep_ms: 1500, output: { attempt: 'any' } } } });
  const id = r.body!.id as string;
  const first = await running(id);
  await cp!.kill('SIGKILL');
  // the handler ends, its job-done fails three times (connection refused) and the SDK gives up
  await new Promise((res) => setTimeout(res, 8000));
  expect((await jobRecords(dataDir, id)).some((x) => x.t === 'fin')).toBe(false);
  const restartedAt = Date.now();
  await spawn();
  const done = await final(id);
  expect(done).toMatchObject({ id, status: 'COMPLETED', output: { attempt: 'any' }, workerId: first.workerId, retries: 1 });
  const recs = await jobRecords(dataDir, id);
  const rq = recs.filter((x) => x.t === 'rq');
  expect(rq).toEqual([expect.objectContaining({ cause: 'lost', error: expect.stringMatching(/job_in_progress=0 .*its result never arrived/) })]);
  // back in the queue within seconds of the restart, not after the 30 s lease the restart gave it
  expect((rq[0] as { at: number }).at - restartedAt).toBeLessThan(15_000);
  expect(recs.filter((x) => x.t === 'take')).toHaveLength(2);
  expect(recs.filter((x) => x.t === 'fin')).toEqual([expect.objectContaining({ status: 'COMPLETED' })]);
}, 300_000);
});
