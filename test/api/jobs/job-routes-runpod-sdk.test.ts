// Every job route, driven by runpod-sdk (the public platform's JS client from npm, unmodified),
// against the real routes and in-process workers of the TypeScript worker SDK speaking the real
// worker protocol: run/status, runSync (runsync + status-sync), statusSync, stream, cancel (the
// worker is told to stop), health, purgeQueue; retry, which the SDK does not wrap, over fetch.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, handlerLog, startJobWorld, type JobWorld } from './in-process-workers.ts';
import { loadRunpodSdk, type RunpodEndpoint } from './runpod-sdk.ts';

let world: JobWorld;
let endpointId: string;
let ep: RunpodEndpoint;

beforeAll(async () => {
  world = await startJobWorld();
  endpointId = await world.newEndpoint();
  await world.startWorker(endpointId, { concurrency: 2 });
  const sdk = await loadRunpodSdk();
  ep = sdk(world.user.key, { baseUrl: `${world.cp.url}/v2` }).endpoint(endpointId)!;
});
afterAll(async () => world?.close());

describe('runpod-sdk drives the job interface', () => {
  test('run then status: the job completes with the handler output, times in ms and the worker id', async () => {
    const queued = await ep.run({ input: { output: { answer: 42 } } });
    expect(queued).toMatchObject({ id: expect.any(String), status: expect.stringMatching(/^(IN_QUEUE|IN_PROGRESS)$/) });
    const done = await eventually(async () => {
      const s = await ep.status(queued.id);
      return s.completed ? s : null;
    });
    expect(done).toMatchObject({ id: queued.id, status: 'COMPLETED', output: { answer: 42 }, succeeded: true, workerId: world.workers[0]!.workerId });
    expect(Number.isInteger(done.delayTime) && done.delayTime >= 0).toBe(true);
    expect(Number.isInteger(done.executionTime) && done.executionTime >= 0).toBe(true);
  });

  test('runSync: runsync?wait answers the finished job with its output', async () => {
    const r = await ep.runSync({ input: { sleep_ms: 300, output: 'sync-out' } }, 20_000);
    expect(r).toMatchObject({ status: 'COMPLETED', output: 'sync-out', completed: true, succeeded: true });
    expect(r.id).toMatch(/^sync-/);
    expect(r.executionTime).toBeGreaterThanOrEqual(250);
  });

  test('statusSync: status-sync?wait holds until the job ends', async () => {
    const { id } = await ep.run({ input: { sleep_ms: 1500, output: 'late' } });
    const t0 = Date.now();
    const s = await ep.statusSync(id, 10_000);
    expect(s).toMatchObject({ id, status: 'COMPLETED', output: 'late' });
    expect(Date.now() - t0).toBeGreaterThan(500); // it waited for the job, not answered at once
  });

  test('stream: every chunk arrives once, in order, as {output}; the generator ends on the final status', async () => {
    const items = Array.from({ length: 6 }, (_, i) => ({ token: `t${i}` }));
    const { id } = await ep.run({ input: { stream: items, stream_delay_ms: 150 } });
    const got: unknown[] = [];
    for await (const chunk of ep.stream(id)) got.push(chunk);
    expect(got).toEqual(items.map((output) => ({ output })));
    expect((await ep.status(id)).status).toBe('COMPLETED');
  });

  test('cancel: a running job becomes CANCELLED and its worker is told to stop it (job-stop)', async () => {
    const { id } = await ep.run({ input: { sleep_ms: 30_000 } });
    await eventually(async () => (await ep.status(id)).status === 'IN_PROGRESS', 10_000, 'the job to start');
    const c = await ep.cancel(id);
    expect(c).toMatchObject({ id, status: 'CANCELLED' });
    expect((await ep.status(id)).status).toBe('CANCELLED');
    await eventually(async () => handlerLog.stopped.includes(id), 10_000, 'the handler to be stopped');
  });

  test('health: job counts of the endpoint and its workers by state', async () => {
    const h = await ep.health();
    expect(h.jobs).toMatchObject({ inQueue: 0, inProgress: 0, failed: 0 });
    expect(h.jobs.completed).toBeGreaterThanOrEqual(4);
    expect(Object.keys(h.workers).sort()).toEqual(['idle', 'initializing', 'ready', 'running', 'throttled', 'unhealthy']);
    expect(h.workers.ready).toBe(1);
  });

  test('purgeQueue: queued jobs of an endpoint with no worker are removed (CANCELLED)', async () => {
    const idle = await world.newEndpoint();
    const sdk = await loadRunpodSdk();
    const other = sdk(world.user.key, { baseUrl: `${world.cp.url}/v2` }).endpoint(idle)!;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await other.run({ input: { n: i } })).id);
    expect((await other.health()).jobs.inQueue).toBe(3);
    expect(await other.purgeQueue()).toEqual({ removed: 3, status: 'completed' });
    for (const id of ids) expect((await other.status(id)).status).toBe('CANCELLED');
    expect((await other.health()).jobs.inQueue).toBe(0);
  });

  test('retry (not wrapped by the SDK): a FAILED job goes back to the queue under the same id', async () => {
    const { id } = await ep.run({ input: { fail: 'boom' } });
    const failed = await eventually(async () => {
      const s = await ep.status(id);
      return s.status === 'FAILED' ? s : null;
    });
    expect(JSON.parse(failed.error)).toMatchObject({ error_type: 'Error', error_message: 'boom' });
    const res = await fetch(`${world.cp.url}/v2/${endpointId}/retry/${id}`, { method: 'POST', headers: { authorization: `Bearer ${world.user.key}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, status: 'IN_QUEUE' });
    const again = await eventually(async () => {
      const s = await ep.status(id);
      return s.status === 'FAILED' && s.retries === 1 ? s : null;
    });
    expect(again.id).toBe(id);
    // retry is only for FAILED and TIMED_OUT
    const ok = await ep.runSync({ input: { output: 1 } }, 20_000);
    const refused = await fetch(`${world.cp.url}/v2/${endpointId}/retry/${ok.id}`, { method: 'POST', headers: { authorization: `Bearer ${world.user.key}` } });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
