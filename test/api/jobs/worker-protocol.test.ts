// The worker protocol routes, called over HTTP as runpod-python's worker calls them (raw token, JSON
// bodies labelled application/x-www-form-urlencoded), with a worker made by StoreWorkerDirectory:
// push dispatch to a waiting job-take, 204 after the poll, job-take-batch, progress vs final
// job-done, stopPod, job-stop, job-stream, ping (renewal, unhealthy), job_in_progress and the ping's
// job list (what the worker says it holds), and executionTimeout.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startJobWorld, type JobWorld } from './in-process-workers.ts';
import { recordJobHistory, type JobHistory } from '../../harness/job-history.ts';

const POLL_MS = 1500;
let world: JobWorld;
let endpointId: string;
let w: { workerId: string; token: string };
let history: JobHistory;

beforeAll(async () => {
  world = await startJobWorld({ config: { workerPollMs: POLL_MS } });
  history = recordJobHistory(world.cp.services.jobQueue);
  endpointId = await world.newEndpoint();
  w = await world.directory.issue(endpointId);
});
afterAll(async () => world?.close());

const base = () => `${world.cp.url}/v2/${endpointId}`;
/** a worker protocol call as runpod-python sends it */
function call(method: 'GET' | 'POST', path: string, body?: unknown, token = w.token, contentType = 'application/x-www-form-urlencoded'): Promise<Response> {
  return fetch(base() + path, {
    method,
    headers: { authorization: token, ...(body !== undefined ? { 'content-type': contentType, charset: 'utf-8' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}
async function run(input: unknown, policy?: unknown): Promise<string> {
  const res = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input, ...(policy ? { policy } : {}) } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}
async function status(id: string): Promise<{ status: string; output?: unknown; error?: string; retries?: number; workerId?: string }> {
  return (await (await world.cp.api(`/v2/${endpointId}/status/${id}`, { key: world.user.key })).json()) as never;
}
async function takeOne(): Promise<{ id: string; input: unknown }> {
  const res = await call('GET', `/job-take/${w.workerId}?gpu=x&job_in_progress=0`);
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; input: unknown };
}

describe('job-take', () => {
  test('a worker waiting in job-take is handed a job the moment it is run (no polling interval)', async () => {
    const waiting = call('GET', `/job-take/${w.workerId}?gpu=x&job_in_progress=0`);
    await new Promise((r) => setTimeout(r, 200)); // the worker is parked
    const t0 = performance.now();
    const id = await run({ prompt: 'push' });
    const res = await waiting;
    const latency = performance.now() - t0;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ id, input: { prompt: 'push' } });
    expect(latency).toBeLessThan(500); // run's own round trip included
    expect((await status(id)).status).toBe('IN_PROGRESS');
    await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: 'ok' });
  });

  test('with nothing queued, job-take answers 204 after the poll, not at once', async () => {
    const t0 = Date.now();
    const res = await call('GET', `/job-take/${w.workerId}?gpu=x&job_in_progress=0`);
    expect(res.status).toBe(204);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(POLL_MS - 100);
  });

  test('job-take-batch?batch_size=3 hands out up to three jobs as a JSON array', async () => {
    const ids = [await run({ n: 1 }), await run({ n: 2 }), await run({ n: 3 }), await run({ n: 4 })];
    const res = await call('GET', `/job-take-batch/${w.workerId}?gpu=x&batch_size=3&job_in_progress=1`);
    const jobs = (await res.json()) as { id: string }[];
    expect(jobs.map((j) => j.id)).toEqual(ids.slice(0, 3));
    const rest = (await (await call('GET', `/job-take-batch/${w.workerId}?gpu=x&batch_size=3&job_in_progress=1`)).json()) as { id: string }[];
    expect(rest.map((j) => j.id)).toEqual([ids[3]]);
    for (const id of ids) await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: id });
    expect((await call('GET', `/job-take-batch/${w.workerId}?batch_size=0`)).status).toBe(400);
  });
});

describe('job-done', () => {
  test('the body is JSON whatever the content-type; status IN_PROGRESS is progress, then the final result; a second result is 409', async () => {
    const id = await run({ p: 1 });
    await takeOne();
    expect((await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { status: 'IN_PROGRESS', output: 'halfway' })).status).toBe(200);
    expect(await status(id)).toMatchObject({ status: 'IN_PROGRESS', output: 'halfway' });
    const fin = await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: { done: true } }, w.token, 'text/plain');
    expect(fin.status).toBe(200);
    expect(await status(id)).toMatchObject({ status: 'COMPLETED', output: { done: true }, workerId: w.workerId });
    const again = await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: 'twice' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe('JOB_ALREADY_FINAL');
    expect((await status(id)).output).toEqual({ done: true });
  });

  test("an error makes the job FAILED with the worker's error; a body that is not JSON is 400", async () => {
    const id = await run({ f: 1 });
    await takeOne();
    expect((await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, 'not json{')).status).toBe(400);
    const payload = JSON.stringify({ error_type: 'ValueError', error_message: 'bad input' });
    await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { error: payload });
    expect(await status(id)).toMatchObject({ status: 'FAILED', error: payload });
  });

  test('stopPod: true completes the job, then the worker is recycled through the WorkerDirectory', async () => {
    const worker = await world.directory.issue(endpointId);
    const id = await run({ r: 1 });
    const took = await call('GET', `/job-take/${worker.workerId}?job_in_progress=0`, undefined, worker.token);
    expect(((await took.json()) as { id: string }).id).toBe(id);
    await call('POST', `/job-done/${worker.workerId}/${id}?isStream=false`, { output: 'x', stopPod: true }, worker.token);
    expect((await status(id)).status).toBe('COMPLETED');
    expect(world.directory.recycled.map((r) => r.workerId)).toContain(worker.workerId);
    // the recycled worker's token is dead
    expect((await call('GET', `/ping/${worker.workerId}`, undefined, worker.token)).status).toBe(401);
  });

  test('a job the worker does not hold is 409 (JOB_LEASE_LOST); a job of another endpoint is 404', async () => {
    const id = await run({ x: 1 });
    const res = await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: 'not mine' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { code: string }).code).toBe('JOB_LEASE_LOST');
    const otherEp = await world.newEndpoint();
    const r2 = await world.cp.api(`/v2/${otherEp}/run`, { method: 'POST', key: world.user.key, json: { input: {} } });
    const otherJob = ((await r2.json()) as { id: string }).id;
    expect((await call('POST', `/job-done/${w.workerId}/${otherJob}?isStream=false`, { output: 'x' })).status).toBe(404);
    expect((await call('POST', `/job-stream/${w.workerId}/${otherJob}?isStream=false`, { output: 'x' })).status).toBe(404);
    await world.cp.api(`/v2/${endpointId}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});

describe('job-stream, job-stop, ping', () => {
  test('job-stream chunks reach /stream in order; a chunk over 1 MiB is 413', async () => {
    const id = await run({ s: 1 });
    await takeOne();
    for (const c of ['a', 'b']) expect((await call('POST', `/job-stream/${w.workerId}/${id}?isStream=false`, { output: c })).status).toBe(200);
    const big = await call('POST', `/job-stream/${w.workerId}/${id}?isStream=false`, { output: 'x'.repeat(2 ** 20) });
    expect(big.status).toBe(413);
    const s = (await (await world.cp.api(`/v2/${endpointId}/stream/${id}`, { key: world.user.key })).json()) as { status: string; stream: unknown[] };
    expect(s).toMatchObject({ status: 'IN_PROGRESS', stream: [{ output: 'a' }, { output: 'b' }] });
    await call('POST', `/job-done/${w.workerId}/${id}?isStream=true`, { output: [] });
    const last = (await (await world.cp.api(`/v2/${endpointId}/stream/${id}`, { key: world.user.key })).json()) as { status: string; stream: unknown[] };
    expect(last).toMatchObject({ status: 'COMPLETED', stream: [] });
  });

  test('job-stop names a job cancelled while the worker runs it; 204 when there is nothing to stop', async () => {
    const id = await run({ c: 1 });
    await takeOne();
    const stop = call('GET', `/job-stop/${w.workerId}`);
    await new Promise((r) => setTimeout(r, 100));
    await world.cp.api(`/v2/${endpointId}/cancel/${id}`, { method: 'POST', key: world.user.key });
    const res = await stop;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jobsToStop: [id] });
    expect((await call('GET', `/job-stop/${w.workerId}`)).status).toBe(204);
  });

  test('ping with job_id tells the WorkerDirectory the jobs the worker holds', async () => {
    const id = await run({ p: 2 });
    await takeOne();
    const before = world.directory.seenReports.length;
    expect((await call('GET', `/ping/${w.workerId}?job_id=${id}&runpod_version=1.7.0`)).status).toBe(200);
    const mine = world.directory.seenReports.slice(before).filter((r) => r.workerId === w.workerId);
    expect(mine.at(-1)?.report).toEqual({ healthy: true, inProgress: [id], workerBusy: true });
    await call('POST', `/job-done/${w.workerId}/${id}?isStream=false`, { output: 1 });
  });

  test('ping status=unhealthy: the directory is told, and the job the worker held goes back to the queue', async () => {
    const sick = await world.directory.issue(endpointId);
    const id = await run({ u: 1 });
    await call('GET', `/job-take/${sick.workerId}?job_in_progress=0`, undefined, sick.token);
    const res = await call('GET', `/ping/${sick.workerId}?status=unhealthy&check=_network_check&reason=no+route+to+8.8.8.8&runpod_version=1.7.0`, undefined, sick.token);
    expect(res.status).toBe(200);
    expect(world.directory.seenReports.find((r) => r.workerId === sick.workerId && !r.report.healthy)?.report).toEqual({
      healthy: false,
      check: '_network_check',
      reason: 'no route to 8.8.8.8',
    });
    expect(await status(id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    await world.cp.api(`/v2/${endpointId}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});

describe('executionTimeout', () => {
  // (that the worker is also told to stop it is the queue's, test/core/jobs/leases.test.ts)
  test('a job past its executionTimeout is TIMED_OUT and its worker recycled through the WorkerDirectory', { timeout: 30_000 }, async () => {
    const slow = await world.directory.issue(endpointId);
    const id = await run({ forever: true }, { executionTimeout: 5000 });
    await call('GET', `/job-take/${slow.workerId}?job_in_progress=0`, undefined, slow.token);
    const s = await eventually(async () => {
      const x = await status(id);
      return x.status === 'TIMED_OUT' ? x : null;
    }, 15_000, 'TIMED_OUT');
    expect(s.error).toMatch(/execution timeout of 5000 ms/);
    await eventually(async () => world.directory.recycled.some((r) => r.workerId === slow.workerId), 5000, 'the recycle');
    await new Promise((r) => setTimeout(r, 300)); // a second recycle, were there one, would have come by now
    // exactly one recycle for the one timed-out job, as a fault (the endpoint backs off)
    const mine = world.directory.recycled.filter((r) => r.workerId === slow.workerId);
    expect(mine).toEqual([{ workerId: slow.workerId, reason: `job ${id} ran past its executionTimeout`, fault: true }]);
  });
});

describe('what the worker says it holds (job_in_progress, the ping job list)', () => {
  const lease = async (id: string) => (await world.cp.services.jobQueue.get(id))!.leaseExpiresAt!;
  // the queue's requeues of the job, through its port (the same on both stores)
  const requeues = (id: string) => history.of(id).filter((r) => r.t === 'rq');

  test('job-take with job_in_progress=1 renews the lease of the job the worker holds, and the worker counts as running', async () => {
    const x = await world.directory.issue(endpointId);
    const id = await run({ busy: 1 });
    expect(((await (await call('GET', `/job-take/${x.workerId}?job_in_progress=0`, undefined, x.token)).json()) as { id: string }).id).toBe(id);
    const before = await lease(id);
    await new Promise((r) => setTimeout(r, 300));
    // the worker asks for more work while it runs the job (runpod-python with concurrency > 1)
    expect((await call('GET', `/job-take/${x.workerId}?job_in_progress=1`, undefined, x.token)).status).toBe(204);
    expect(await lease(id)).toBeGreaterThanOrEqual(before + 300);
    expect(await status(id)).toMatchObject({ status: 'IN_PROGRESS', workerId: x.workerId });
    expect((await status(id)).retries ?? 0).toBe(0);
    const report = world.directory.seenReports.filter((r) => r.workerId === x.workerId).at(-1)!.report;
    expect(report).toEqual({ healthy: true, inProgress: [id], workerBusy: true });
    await call('POST', `/job-done/${x.workerId}/${id}?isStream=false`, { output: 'done' }, x.token);
    expect(await status(id)).toMatchObject({ status: 'COMPLETED', output: 'done' });
  });

  test('job_in_progress=1 with no job the queue knows of: the worker still counts as running (a cancelled job still in its handler)', async () => {
    const x = await world.directory.issue(endpointId);
    const id = await run({ cancelMe: 1 });
    await call('GET', `/job-take/${x.workerId}?job_in_progress=0`, undefined, x.token);
    await world.cp.api(`/v2/${endpointId}/cancel/${id}`, { method: 'POST', key: world.user.key });
    expect((await call('GET', `/job-take/${x.workerId}?job_in_progress=1`, undefined, x.token)).status).toBe(204);
    expect(world.directory.seenReports.filter((r) => r.workerId === x.workerId).at(-1)!.report).toEqual({ healthy: true, inProgress: [], workerBusy: true });
    expect((await call('GET', `/job-take/${x.workerId}?job_in_progress=0`, undefined, x.token)).status).toBe(204);
    expect(world.directory.seenReports.filter((r) => r.workerId === x.workerId).at(-1)!.report).toEqual({ healthy: true, inProgress: [], workerBusy: false });
  });

  test('job-take with job_in_progress=0 while the control plane has a job running there (its job-done was lost): the job goes back to the queue at once, its retry counted', async () => {
    const y = await world.directory.issue(endpointId);
    const id = await run({ lost: 1 });
    expect(((await (await call('GET', `/job-take/${y.workerId}?job_in_progress=0`, undefined, y.token)).json()) as { id: string }).id).toBe(id);
    // the worker finished it, its job-done never arrived, and it asks for work holding nothing:
    // the same job comes straight back to it as a new attempt, not after its 30 s lease
    const t0 = Date.now();
    const again = await call('GET', `/job-take/${y.workerId}?job_in_progress=0`, undefined, y.token);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(((await again.json()) as { id: string }).id).toBe(id);
    expect(await status(id)).toMatchObject({ status: 'IN_PROGRESS', workerId: y.workerId, retries: 1 });
    expect(requeues(id)).toEqual([expect.objectContaining({ cause: 'lost', error: expect.stringMatching(/job_in_progress=0 .*its result never arrived/) })]);
    // the worker is not told to stop the attempt it now runs
    expect((await call('GET', `/job-stop/${y.workerId}`, undefined, y.token)).status).toBe(204);
    await call('POST', `/job-done/${y.workerId}/${id}?isStream=false`, { output: 'second attempt' }, y.token);
    expect(await status(id)).toMatchObject({ status: 'COMPLETED', output: 'second attempt', retries: 1 });
  });

  test('a ping that leaves out a job taken before the previous ping: that job goes back to the queue; a job taken since, not yet listed, stays', { timeout: 20_000 }, async () => {
    const z = await world.directory.issue(endpointId);
    const ping = (ids: string[]) => call('GET', `/ping/${z.workerId}?${ids.length ? `job_id=${ids.join(',')}&` : ''}runpod_version=1.7.0`, undefined, z.token);
    const j1 = await run({ pinged: 1 });
    await call('GET', `/job-take/${z.workerId}?job_in_progress=0`, undefined, z.token);
    // the first ping heard (as after a restart) proves nothing: its list may predate the take
    expect((await ping([])).status).toBe(200);
    expect(await status(j1)).toMatchObject({ status: 'IN_PROGRESS', workerId: z.workerId });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await ping([j1])).status).toBe(200);
    const j2 = await run({ pinged: 2 });
    await call('GET', `/job-take/${z.workerId}?job_in_progress=1`, undefined, z.token);
    // j1 is missing from a list taken after the previous ping, which came well after j1's take
    expect((await ping([])).status).toBe(200);
    expect(await status(j1)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    expect(requeues(j1)).toEqual([expect.objectContaining({ cause: 'lost', error: expect.stringMatching(/pings no longer list this job/) })]);
    expect(await status(j2)).toMatchObject({ status: 'IN_PROGRESS', workerId: z.workerId });
    expect((await status(j2)).retries ?? 0).toBe(0);
    await call('POST', `/job-done/${z.workerId}/${j2}?isStream=false`, { output: 2 }, z.token);
    await world.cp.api(`/v2/${endpointId}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});
