// GET /metrics for serverless queue endpoints (issue 13, docs/metrics.md "Jobs and workers"): jobs
// run through the real job routes by an in-process worker, then the exposition is parsed and its
// job, duration and worker series compared with the jobs this test made.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ADMIN_KEY } from '../harness/control-plane.ts';
import { parsePrometheusText, sampleValue, samplesOf } from '../harness/prometheus-text.ts';
import { startJobWorld, type JobWorld } from './jobs/in-process-workers.ts';

let world: JobWorld;
beforeAll(async () => {
  world = await startJobWorld({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
});
afterAll(async () => world?.close());

const scrape = async () => {
  const res = await world.cp.api('/metrics', { key: ADMIN_KEY });
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
};

async function runsync(endpointId: string, input: unknown): Promise<{ id: string; status: string }> {
  const res = await world.cp.api(`/v2/${endpointId}/runsync`, { method: 'POST', key: world.user.key, json: { input } });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { id: string; status: string };
}

test('jobs that complete and fail are counted exactly: gpufleet_jobs, gpufleet_jobs_finished_total, gpufleet_job_duration_seconds, gpufleet_workers', async () => {
  const served = await world.newEndpoint();
  const idle = await world.newEndpoint();
  await world.startWorker(served);

  for (let i = 0; i < 3; i++) expect((await runsync(served, { output: i })).status).toBe('COMPLETED');
  for (let i = 0; i < 2; i++) expect((await runsync(served, { fail: `boom ${i}` })).status).toBe('FAILED');
  // a job no worker takes stays IN_QUEUE
  const queued = await world.cp.api(`/v2/${idle}/run`, { method: 'POST', key: world.user.key, json: { input: {} } });
  expect(queued.status).toBeLessThan(300);

  const m = await scrape();
  expect(m.get('gpufleet_jobs')?.type).toBe('gauge');
  expect(m.get('gpufleet_jobs_finished_total')?.type).toBe('counter');
  expect(m.get('gpufleet_job_duration_seconds')?.type).toBe('histogram');
  expect(m.get('gpufleet_workers')?.type).toBe('gauge');

  expect(sampleValue(m, 'gpufleet_jobs', { endpoint: served, status: 'IN_QUEUE' })).toBe(0);
  expect(sampleValue(m, 'gpufleet_jobs', { endpoint: served, status: 'IN_PROGRESS' })).toBe(0);
  expect(sampleValue(m, 'gpufleet_jobs', { endpoint: idle, status: 'IN_QUEUE' })).toBe(1);
  expect(sampleValue(m, 'gpufleet_jobs', { endpoint: idle, status: 'IN_PROGRESS' })).toBe(0);

  expect(sampleValue(m, 'gpufleet_jobs_finished_total', { endpoint: served, status: 'COMPLETED' })).toBe(3);
  expect(sampleValue(m, 'gpufleet_jobs_finished_total', { endpoint: served, status: 'FAILED' })).toBe(2);
  expect(sampleValue(m, 'gpufleet_jobs_finished_total', { endpoint: served, status: 'CANCELLED' })).toBe(0);
  expect(sampleValue(m, 'gpufleet_jobs_finished_total', { endpoint: served, status: 'TIMED_OUT' })).toBe(0);
  // an endpoint with nothing finished still shows its zeros (a rate needs them)
  expect(samplesOf(m, 'gpufleet_jobs_finished_total', { endpoint: idle }).map((s) => s.value)).toEqual([0, 0, 0, 0]);

  expect(sampleValue(m, 'gpufleet_job_duration_seconds_count', { endpoint: served, status: 'COMPLETED' })).toBe(3);
  expect(sampleValue(m, 'gpufleet_job_duration_seconds_count', { endpoint: served, status: 'FAILED' })).toBe(2);
  expect(sampleValue(m, 'gpufleet_job_duration_seconds_bucket', { endpoint: served, status: 'COMPLETED', le: '+Inf' })).toBe(3);
  expect(samplesOf(m, 'gpufleet_job_duration_seconds_count', { endpoint: idle })).toEqual([]);

  // the in-process worker is not a worker record, so the worker service counts none: every state at 0
  for (const endpoint of [served, idle]) {
    const states = samplesOf(m, 'gpufleet_workers', { endpoint }).map((s) => [s.labels.state, s.value]);
    expect(Object.fromEntries(states)).toEqual({ idle: 0, initializing: 0, running: 0, unhealthy: 0, throttled: 0 });
  }
});

test("a deleted endpoint's series are gone at the next scrape (the endpoint label stays bounded)", async () => {
  const gone = await world.newEndpoint();
  await world.startWorker(gone);
  expect((await runsync(gone, {})).status).toBe('COMPLETED');
  let m = await scrape();
  expect(sampleValue(m, 'gpufleet_jobs_finished_total', { endpoint: gone, status: 'COMPLETED' })).toBe(1);
  expect(sampleValue(m, 'gpufleet_job_duration_seconds_count', { endpoint: gone, status: 'COMPLETED' })).toBe(1);

  const del = await world.cp.api(`/v2/serverless/${gone}`, { method: 'DELETE', key: world.user.key });
  expect(del.status).toBe(204);
  m = await scrape();
  for (const name of ['gpufleet_jobs', 'gpufleet_jobs_finished_total', 'gpufleet_job_duration_seconds_count', 'gpufleet_job_duration_seconds_bucket', 'gpufleet_workers'])
    expect(samplesOf(m, name, { endpoint: gone }), name).toEqual([]);
});
