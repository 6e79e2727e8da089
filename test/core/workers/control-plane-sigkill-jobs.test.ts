// Fault: the control plane (`gpufleet serve` as a child process) is SIGKILLed while an endpoint has
// jobs both queued and running on real worker containers (Node worker image) on a test host. It is
// restarted on the same port and data directory (the workers' URLs name that port, so the same
// worker containers keep calling it). Every job whose `run` was acknowledged before the kill reaches
// COMPLETED with its own output, and the queue's log holds exactly one final record for each: none
// lost, none completed twice.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, spawnedAdminApi, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensureNodeWorkerImage } from '../../harness/worker-images.ts';
import { jobRecords } from './job-log.ts';
import { waitFor } from '../../harness/wait-for.ts';

let h: TestHost;
let dataDir: string;
let port = 0;
let gateway = '';
let cp: SpawnedControlPlane | null = null;
let hostId = '';
let image = '';

const api = spawnedAdminApi(() => cp);


// listens on every address so the test reaches it on loopback and the worker containers on the bridge gateway
const spawn = async () =>
  (cp = await spawnControlPlane({
    dataDir,
    port,
    env: { HOST: '0.0.0.0', GPUFLEET_WORKER_URL: `http://${gateway}:${port}`, GPUFLEET_RECONCILE_INTERVAL_MS: '300' },
  }));

beforeAll(async () => {
  image = await ensureNodeWorkerImage();
  gateway = await dockerBridgeGateway();
  h = await startTestHost({ name: `cp-kill-jobs-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-kill-jobs-'));
  port = await freePort();
  await spawn();
  hostId = await enrolTestHost(cp!, h, { dataCenterId: 'dc-cp-kill' });
}, 300_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host: h, hostId });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('the control plane SIGKILLed with jobs queued and running: after restart every acknowledged job is COMPLETED exactly once', async () => {
  const tpl = await api('/v2/templates', { method: 'POST', json: { name: 'node-worker', image, disk: 1, serverless: true } });
  expect(tpl.status, JSON.stringify(tpl.body)).toBeLessThan(300);
  const ep = await api('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.body!.id, name: 'cp-kill', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 2, idleTimeout: 60 },
  });
  expect(ep.status, JSON.stringify(ep.body)).toBe(200);
  const epId = ep.body!.id as string;

  // each job sleeps 3 s on its worker: with at most 2 workers, 6 jobs are partly running and partly queued
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await api(`/v2/${epId}/run`, { method: 'POST', json: { input: { sleep_ms: 3000, output: { i } } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body!.id as string);
  }
  const before = await waitFor(
    'jobs both running and queued',
    async () => {
      const st = await Promise.all(ids.map(async (id) => (await api(`/v2/${epId}/status/${id}`)).body!.status as string));
      return st.includes('IN_PROGRESS') && st.includes('IN_QUEUE') ? st : null;
    },
    120_000,
    100,
  );

  await cp!.kill('SIGKILL');
  expect(cp!.proc.signalCode).toBe('SIGKILL');
  // what the dead control plane's log held at the kill: some jobs taken and not final (running), some never taken (queued)
  const atKill = await Promise.all(
    ids.map(async (id) => {
      const recs = await jobRecords(dataDir, id);
      return recs.some((r) => r.t === 'fin') ? 'final' : recs.some((r) => r.t === 'take') ? 'running' : 'queued';
    }),
  );
  expect(atKill).toContain('running');
  expect(atKill).toContain('queued');
  await spawn();

  const after = await waitFor(
    'every acknowledged job final',
    async () => {
      const jobs = await Promise.all(ids.map(async (id) => (await api(`/v2/${epId}/status/${id}`)).body!));
      return jobs.every((j) => ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(j.status)) ? jobs : null;
    },
    180_000,
    500,
  );
  console.log(`[cp-sigkill-jobs] at the kill: ${before.join(',')} (log: ${atKill.join(',')}); after restart retries: ${after.map((j) => j.retries ?? 0).join(',')}`);
  const requeues = (await Promise.all(ids.map((id) => jobRecords(dataDir, id)))).flat().filter((r) => r.t === 'rq');
  console.log(`[cp-sigkill-jobs] requeues after restart: ${JSON.stringify(requeues)}`);
  ids.forEach((id, i) => expect(after[i]).toMatchObject({ id, status: 'COMPLETED', output: { i } }));
  for (const id of ids) {
    const fins = (await jobRecords(dataDir, id)).filter((r) => r.t === 'fin');
    expect(fins, `final records of ${id}`).toEqual([expect.objectContaining({ status: 'COMPLETED' })]);
  }
  const health = await api(`/v2/${epId}/health`);
  expect(health.body!.jobs).toMatchObject({ completed: 6, failed: 0, inProgress: 0, inQueue: 0 });
}, 420_000);
