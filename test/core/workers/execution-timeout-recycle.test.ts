// A job past its executionTimeout on a real worker container (Node worker image, on a real sshd test
// host, the full control plane with the provisioner and the autoscaler): the job is TIMED_OUT and its
// worker recycled exactly once, as a fault. Both the job side (the queue's onRecycle) and the worker
// side once listened for it, so one timeout could retire the worker twice with different reasons and
// fault flags; counted here: one worker record, one `worker.terminated` event, one fault in the
// endpoint's backoff, one container gone, then one new container for the next job.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, dockerInspect, enrolTestHost, FIXTURE_GPUS, listContainers, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensureNodeWorkerImage } from '../../harness/worker-images.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { isWorker } from '../../../model/index.ts';
import { recordJobHistory, type JobHistory } from '../../harness/job-history.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let endpointId = '';
let history: JobHistory;

const json = async (res: Response) => (await res.json()) as Record<string, any>;

beforeAll(async () => {
  const image = await ensureNodeWorkerImage();
  host = await startTestHost({ name: `exec-timeout-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-exec-timeout' });
  const tpl = await json(await cp.api('/v2/templates', { method: 'POST', json: { name: 'node-worker', image, disk: 1, serverless: true } }));
  const ep = await cp.api('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.id, name: 'exec-timeout', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 120 },
  });
  expect(ep.status).toBe(200);
  endpointId = (await json(ep)).id;
  history = recordJobHistory(cp.services.jobQueue);
}, 600_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

const workers = async () => (await cp.services.store.list('pods', { endpointId })).filter(isWorker);

test('a job past its executionTimeout: TIMED_OUT, its worker recycled exactly once as a fault, one container replaced by one', async () => {
  const run = await json(await cp.api(`/v2/${endpointId}/run`, { method: 'POST', json: { input: { sleep_ms: 120_000 }, policy: { executionTimeout: 5000 } } }));
  const id = run.id as string;
  const job = await waitFor('the job TIMED_OUT', async () => {
    const j = await json(await cp.api(`/v2/${endpointId}/status/${id}`));
    return j.status === 'TIMED_OUT' ? j : null;
  }, 180_000, 200);
  expect(job.error).toMatch(/execution timeout of 5000 ms exceeded/);
  expect(job.retries ?? 0).toBe(0);
  const [w] = await workers();
  expect(w).toBeDefined();
  // its container goes; a second recycle, were there one, has long come by then
  await waitFor('the worker container removed', async () => (await dockerInspect(`gpufleet-${w!.id}`)) === null, 60_000, 200);
  await new Promise((r) => setTimeout(r, 2000));

  const all = await workers();
  expect(all.map((x) => x.id)).toEqual([w!.id]);
  expect(all[0]!.worker).toMatchObject({ retiredReason: `recycled: job ${id} ran past its executionTimeout`, failed: true });
  const events = (await json(await cp.api(`/v2/events?resourceId=${w!.id}`))).events as { type: string }[];
  expect(events.filter((e) => e.type === 'worker.terminated')).toHaveLength(1);
  expect(cp.services.workers.backoff.count(endpointId, Date.now())).toBe(1);
  // one final status for the job, on either store (the queue's onFinal)
  expect(history.of(id).filter((r) => r.t === 'fin')).toEqual([expect.objectContaining({ status: 'TIMED_OUT' })]);
  expect(await listContainers(`gpufleet.host=${hostId}`)).toEqual([]);

  // the next job gets one new worker (after the one fault's backoff), and completes
  const next = await json(await cp.api(`/v2/${endpointId}/runsync?wait=120000`, { method: 'POST', json: { input: { output: 'after the recycle' } } }));
  expect(next).toMatchObject({ status: 'COMPLETED', output: 'after the recycle' });
  const after = await workers();
  expect(after).toHaveLength(2);
  expect(next.workerId).toBe(after.find((x) => x.id !== w!.id)!.id);
  expect((await listContainers(`gpufleet.host=${hostId}`)).map((c) => c.Name)).toEqual([`/gpufleet-${next.workerId}`]);
}, 400_000);
