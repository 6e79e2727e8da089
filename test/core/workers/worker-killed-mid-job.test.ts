// Fault: a worker container is killed (`docker kill`, SIGKILL) while its job is IN_PROGRESS. The
// handler sleeps, so the kill lands while the job runs on that worker (the test checks the job is
// IN_PROGRESS on that worker just before the kill and that the container is gone after it). The
// provisioner sees the container exit, the worker is taken out as a fault, the job goes back to the
// queue with its retry counted, and a new worker (after the fault backoff) completes it exactly once.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, dockerInspect, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensureNodeWorkerImage } from '../../harness/worker-images.ts';
import { recordJobHistory, type JobHistory } from '../../harness/job-history.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { waitFor } from '../../harness/wait-for.ts';

const run = promisify(execFile);
let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let user: { accountId: string; key: string };
let image: string;
let history: JobHistory;

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });


beforeAll(async () => {
  image = await ensureNodeWorkerImage();
  host = await startTestHost({ name: `kill-mid-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-kill-mid' });
  user = await cp.newAccount();
  history = recordJobHistory(cp.services.jobQueue);
}, 300_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

test('a worker container killed while its job is IN_PROGRESS: the job is retried on another worker and COMPLETED once, with retries 1', async () => {
  const tpl = await json(await asUser('/v2/templates', { method: 'POST', json: { name: 'node-worker', image, disk: 1, serverless: true } }));
  const ep = await json(
    await asUser('/v1/endpoints', {
      method: 'POST',
      json: { templateId: tpl.id, name: 'kill-mid-job', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 60 },
    }),
  );
  expect(ep.id, JSON.stringify(ep)).toBeTruthy();

  // the handler sleeps 6 s: long enough for the kill to land while it runs
  const submitted = await json(await asUser(`/v2/${ep.id}/run`, { method: 'POST', json: { input: { sleep_ms: 6000, output: { survived: true } } } }));
  const id = submitted.id as string;
  const running = await waitFor(
    'the job IN_PROGRESS on a worker',
    async () => {
      const j = await json(await asUser(`/v2/${ep.id}/status/${id}`));
      return j.status === 'IN_PROGRESS' && j.workerId ? j : null;
    },
    120_000,
  );
  const killed = running.workerId as string;
  await run('docker', ['kill', `gpufleet-${killed}`]);
  // the kill landed mid-job: the job had not finished on that worker, and its container is no longer running
  expect((await dockerInspect(`gpufleet-${killed}`))?.State.Running ?? false).toBe(false);
  const atKill = await json(await asUser(`/v2/${ep.id}/status/${id}`));
  expect(atKill.status).not.toBe('COMPLETED');

  const done = await waitFor(
    'the job final',
    async () => {
      const j = await json(await asUser(`/v2/${ep.id}/status/${id}`));
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(j.status) ? j : null;
    },
    120_000,
    250,
  );
  expect(done).toMatchObject({ id, status: 'COMPLETED', output: { survived: true }, retries: 1 });
  expect(done.workerId).not.toBe(killed);

  // through the queue's port, on either store: one final status for the job (COMPLETED), one requeue
  // (its worker lost), and two takes (the killed worker, then another); `retries: 1` above counts
  // every requeue, so there was no other (an expired lease, say)
  await history.final(id);
  const recs = history.of(id);
  expect(recs.filter((r) => r.t === 'fin')).toEqual([expect.objectContaining({ status: 'COMPLETED' })]);
  expect(recs.filter((r) => r.t === 'rq')).toEqual([expect.objectContaining({ cause: 'lost' })]);
  expect(recs.filter((r) => r.t === 'take').map((r) => (r as { worker: string }).worker)).toEqual([killed, done.workerId]);
  const h = await json(await asUser(`/v2/${ep.id}/health`));
  expect(h.jobs).toMatchObject({ completed: 1, failed: 0, retried: 1 });
}, 240_000);
