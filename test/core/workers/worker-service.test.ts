// The worker side over a real store and a real job queue, hosts as records (nothing dials them) and
// one clock the test moves: worker records, tokens, states, the autoscaler's ticks, faults and backoff,
// lost hosts, version rolls, billing, and workers kept out of the pod interface.
import { afterEach, describe, expect, test } from 'vitest';
import { isGpufleetError } from '../../../model/index.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { openWorkerFixture, ORIGIN, type WorkerFixture } from './worker-fixture.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const L40S = 'NVIDIA L40S';
let fx: WorkerFixture;

afterEach(async () => fx?.close());

const tokenOf = (id: string) => async () => {
  const pod = await fx.services.store.get('pods', id);
  return fx.workers.containerEnv(pod!).RUNPOD_AI_API_KEY!;
};
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return isGpufleetError(e) ? e.code : String(e);
  }
  return 'resolved';
}

describe('worker records', () => {
  test('queued jobs start workers on the endpoint GPU types in priority order, each from the template with the endpoint env over it', async () => {
    fx = await openWorkerFixture({ hosts: [{ id: 'host-h100', gpus: 1 }, { id: 'host-l40s', gpus: 2, gpuName: L40S, gpuTypeId: L40S }] });
    const e = await fx.endpoint({ gpuTypeIds: [H100, L40S], workersMax: 3, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
    await fx.enqueue(e.id, 3);
    await fx.scaler.tick();
    const ws = await fx.live(e.id);
    expect(ws.map((w) => w.gpu?.id).sort()).toEqual([H100, L40S, L40S]);
    const h = ws.find((w) => w.gpu?.id === H100)!;
    expect(h.hostId).toBe('host-h100');
    expect(ws.filter((w) => w.hostId === 'host-l40s')).toHaveLength(2);
    // priced as the type placed, billed to the endpoint's account
    expect(h.costPerHr).toBeGreaterThan(ws.find((w) => w.gpu?.id === L40S)!.costPerHr);
    for (const w of ws) {
      expect(w.accountId).toBe(fx.principal.accountId);
      expect(w.endpointId).toBe(e.id);
      expect(w.env).toEqual({ FROM_TEMPLATE: 't', SHARED: 'endpoint' });
      expect(w.image).toBe('img');
      expect(w.worker.version).toBe(e.version);
    }
  });

  test('the container env carries the protocol URLs (each with a "?"), the worker id and its token; the record holds neither URL nor token', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    const env = fx.workers.containerEnv(w!);
    const q = '?gpu=NVIDIA+H100+80GB+HBM3';
    expect(env).toMatchObject({
      RUNPOD_WEBHOOK_GET_JOB: `${ORIGIN}/v2/${e.id}/job-take/${w!.id}${q}`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${ORIGIN}/v2/${e.id}/job-done/$RUNPOD_POD_ID/$ID${q}`,
      RUNPOD_WEBHOOK_POST_STREAM: `${ORIGIN}/v2/${e.id}/job-stream/$RUNPOD_POD_ID/$ID${q}`,
      RUNPOD_WEBHOOK_PING: `${ORIGIN}/v2/${e.id}/ping/$RUNPOD_POD_ID${q}`,
      RUNPOD_POD_ID: w!.id,
      RUNPOD_ENDPOINT_ID: e.id,
      RUNPOD_PING_INTERVAL: '10000',
    });
    expect(env.RUNPOD_AI_API_KEY).toMatch(/^gfw_[a-z0-9]+\.[A-Za-z0-9_-]{43}$/);
    const stored = JSON.stringify(await fx.services.store.get('pods', w!.id));
    expect(stored).not.toContain(env.RUNPOD_AI_API_KEY);
    expect(Object.keys(w!.env)).not.toContain('RUNPOD_AI_API_KEY');
    expect(JSON.stringify(await fx.workers.views(e))).not.toContain(env.RUNPOD_AI_API_KEY);
    expect(JSON.stringify(await fx.workers.podViews(e))).not.toContain(env.RUNPOD_AI_API_KEY);
  });

  test('a worker token authenticates its own worker only, and stops working once the worker is retired', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 2 });
    await fx.scaler.tick();
    const [a, b] = await fx.live(e.id);
    const tokenA = await tokenOf(a!.id)();
    expect(await fx.workers.authenticate(tokenA)).toEqual({ workerId: a!.id, endpointId: e.id, accountId: fx.principal.accountId, hostId: a!.hostId });
    // the same secret under another worker's id, a changed character, garbage: nobody
    expect(await fx.workers.authenticate(tokenA.replace(a!.id, b!.id))).toBeNull();
    expect(await fx.workers.authenticate(tokenA.slice(0, -1) + (tokenA.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(await fx.workers.authenticate('Bearer ' + tokenA)).toBeNull();
    expect(await fx.workers.authenticate('')).toBeNull();
    await fx.workers.recycle(a!.id, 'stopPod');
    expect(await fx.workers.authenticate(tokenA)).toBeNull();
    expect(await fx.workers.authenticate(await tokenOf(b!.id)())).not.toBeNull();
  });
});

describe('states and counts', () => {
  test('INITIALIZING until the first call, then IDLE or RUNNING by the jobs it holds; health counts follow', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    expect((await fx.workers.views(e))[0]!.status).toBe('INITIALIZING');
    expect(await fx.workers.counts(e.id)).toEqual({ idle: 0, initializing: 1, ready: 0, running: 0, throttled: 0, unhealthy: 0 });
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [] });
    expect((await fx.services.store.get('pods', w!.id))!.worker!.readyAt).not.toBeNull();
    expect(await fx.workers.counts(e.id)).toMatchObject({ idle: 1, initializing: 0, ready: 1, running: 0 });
    await fx.workers.seen(w!.id, { healthy: true, inProgress: ['job-1'] });
    expect((await fx.workers.views(e))[0]!.status).toBe('RUNNING');
    expect(await fx.workers.counts(e.id)).toMatchObject({ idle: 0, ready: 1, running: 1 });
  });

  test('workers wanted but not placeable count as throttled, with the capacity reason on the endpoint', async () => {
    fx = await openWorkerFixture({ hosts: [{ id: 'one-gpu', gpus: 1 }] });
    const e = await fx.endpoint({ workersMax: 3, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
    await fx.enqueue(e.id, 3);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(1);
    expect((await fx.workers.counts(e.id)).throttled).toBe(2);
    expect((await fx.workers.status(e.id)).reason).toMatch(/2 worker\(s\) wanted but not started: no capacity/);
  });
});

describe('autoscaler ticks', () => {
  test('an idle worker stops after idleTimeout seconds, and never below workersMin', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1, workersMax: 2, idleTimeout: 5, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
    const jobs = await fx.enqueue(e.id, 2);
    await fx.scaler.tick();
    const ws = await fx.live(e.id);
    expect(ws).toHaveLength(2);
    // each worker takes a job, finishes it, and reports itself idle
    for (const [i, w] of ws.entries()) {
      await fx.markRunning(w.id);
      const [taken] = await fx.queue.take(e.id, w.id, { waitMs: 0 });
      expect(taken?.id).toBe(jobs[i]);
      await fx.workers.seen(w.id, { healthy: true, inProgress: [taken!.id] });
      await fx.queue.complete(taken!.id, w.id, { output: 'ok' });
      await fx.workers.seen(w.id, { healthy: true, inProgress: [] });
    }
    fx.advance(4_000);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(2);
    fx.advance(1_500);
    await fx.workers.seen(ws[0]!.id, { healthy: true, inProgress: [] });
    await fx.workers.seen(ws[1]!.id, { healthy: true, inProgress: [] });
    await fx.scaler.tick();
    const left = await fx.live(e.id);
    expect(left).toHaveLength(1);
    const gone = (await fx.all(e.id)).find((w) => w.worker.retiredReason !== null)!;
    expect(gone.worker.retiredReason).toMatch(/^idle for 5 s \(idleTimeout 5 s\)$/);
    expect(gone.worker.failed).toBe(false);
    fx.advance(120_000);
    for (const w of left) await fx.workers.seen(w.id, { healthy: true, inProgress: [] });
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(1);
  });

  test('a worker that says it still runs a job the queue no longer gives it (job_in_progress=1) is RUNNING and not stopped as idle; once it says it runs nothing, idleTimeout applies', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 0, workersMax: 1, idleTimeout: 5 });
    const [job] = await fx.enqueue(e.id);
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    await fx.markRunning(w!.id);
    await fx.queue.take(e.id, w!.id, { waitMs: 0 });
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [job!], workerBusy: false });
    // the user cancels it; the handler goes on (a sync handler cannot be interrupted) and says so
    await fx.queue.cancel(job!);
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [], workerBusy: true });
    expect((await fx.workers.views(e)).map((v) => v.status)).toEqual(['RUNNING']);
    fx.advance(60_000);
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [] }); // a call that does not say (job-done): the last word stands
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(1);
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [], workerBusy: false });
    expect((await fx.workers.views(e)).map((v) => v.status)).toEqual(['IDLE']);
    fx.advance(5_000);
    await fx.workers.seen(w!.id, { healthy: true, inProgress: [], workerBusy: false });
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(0);
  });

  test('a queued job starts a worker at once when the job side says so, without waiting for the next tick', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint();
    const slow = new (fx.scaler.constructor as new (...a: unknown[]) => typeof fx.scaler)(fx.workers, fx.services.store, fx.queue, { tickMs: 60_000 });
    slow.start();
    try {
      await new Promise((r) => setTimeout(r, 100)); // the first tick: nothing queued
      expect(await fx.live(e.id)).toHaveLength(0);
      await fx.enqueue(e.id);
      const t0 = Date.now();
      fx.workers.notifyQueued(e.id);
      while ((await fx.live(e.id)).length === 0 && Date.now() - t0 < 2_000) await new Promise((r) => setTimeout(r, 10));
      expect(await fx.live(e.id)).toHaveLength(1);
      expect(Date.now() - t0).toBeLessThan(1_000);
    } finally {
      await slow.stop();
    }
  });

  test('a crashed worker is retired and not fed: its job goes back to the queue, and replacements wait a backoff that doubles', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w1] = await fx.live(e.id);
    await fx.markRunning(w1!.id);
    const token1 = await tokenOf(w1!.id)();
    const [job] = await fx.enqueue(e.id);
    await fx.queue.take(e.id, w1!.id, { waitMs: 0 });
    await fx.markCrashed(w1!.id, 'container crashed on start (exit code 3): boom');
    await fx.scaler.tick();
    const r1 = (await fx.services.store.get('pods', w1!.id))!;
    expect(r1.status).toBe('TERMINATED');
    expect(r1.worker!.failed).toBe(true);
    expect(r1.worker!.retiredReason).toContain('exit code 3): boom');
    expect(await fx.workers.authenticate(token1)).toBeNull();
    const back = (await fx.queue.get(job!))!;
    expect(back.status).toBe('IN_QUEUE');
    expect(back.retries).toBe(1);
    // shown as UNHEALTHY with its reason; the endpoint says why nothing replaces it yet
    expect((await fx.workers.views(e)).map((v) => [v.id, v.status])).toEqual([[w1!.id, 'UNHEALTHY']]);
    expect((await fx.workers.counts(e.id)).unhealthy).toBe(1);
    expect((await fx.workers.status(e.id)).reason).toMatch(/new workers wait until .* after 1 worker fault\(s\).*exit code 3/);
    expect(await fx.live(e.id)).toHaveLength(0);
    fx.advance(4_900);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(0);
    fx.advance(200);
    await fx.scaler.tick();
    const [w2] = await fx.live(e.id);
    expect(w2).toBeDefined();
    // the second crash doubles the wait: 10 s
    await fx.markCrashed(w2!.id);
    await fx.scaler.tick();
    fx.advance(9_800);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(0);
    fx.advance(300);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(1);
  });

  test('an unhealthy ping takes the worker out at once and its replacement waits the backoff', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    await fx.workers.seen(w!.id, { healthy: false, check: '_network_check', reason: 'no route to 8.8.8.8' });
    const r = (await fx.services.store.get('pods', w!.id))!;
    expect(r.worker!.retiredReason).toBe('the worker reported itself unhealthy: _network_check: no route to 8.8.8.8');
    expect(r.allocated).toBe(false);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(0);
    fx.advance(5_001);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(1);
  });

  test('a worker that never calls is taken out after initTimeout, and the reason names the URL it was given', async () => {
    fx = await openWorkerFixture({ workers: { initTimeoutMs: 30_000 } });
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    await fx.markRunning(w!.id);
    fx.advance(20_000);
    await fx.scaler.tick();
    expect((await fx.workers.views(e))[0]!.statusReason).toBe(`container running for 20 s; waiting for the worker's first job-take or ping at ${ORIGIN}`);
    fx.advance(61_000);
    await fx.scaler.tick();
    const r = (await fx.services.store.get('pods', w!.id))!;
    expect(r.worker!.retiredReason).toContain(`it may not reach the control plane at ${ORIGIN} (GPUFLEET_WORKER_URL)`);
    expect(r.worker!.failed).toBe(true);
  });

  test('a running worker that has not called for a minute is named in the endpoint reason, with the URL it was given', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    await fx.markRunning(w!.id);
    fx.advance(30_000);
    expect((await fx.workers.status(e.id)).reason).toBeNull();
    fx.advance(31_000);
    await fx.scaler.tick();
    expect((await fx.workers.status(e.id)).reason).toBe(`worker ${w!.id}: container running for 61 s; waiting for the worker's first job-take or ping at ${ORIGIN}`);
    // still in service: a slow start is not a fault until initTimeout (10 min by default)
    expect(await fx.live(e.id)).toHaveLength(1);
  });

  test('a job past its executionTimeout recycles its worker and counts as a fault', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    const j = await fx.queue.enqueue({ endpointId: e.id, accountId: fx.principal.accountId, input: {}, sync: false, policy: { executionTimeout: 5_000 } });
    await fx.queue.take(e.id, w!.id, { waitMs: 0 });
    fx.advance(5_001);
    await fx.queue.sweep();
    expect((await fx.queue.get(j.id))!.status).toBe('TIMED_OUT');
    // the recycle reaches the worker service from the job side's onFinal, on its own time
    await waitFor('the worker recycled', async () => (await fx.live(e.id)).length === 0, 10_000, 10);
    const r = (await fx.services.store.get('pods', w!.id))!;
    expect(r.worker!.retiredReason).toBe(`recycled: job ${j.id} ran past its executionTimeout`);
    expect(r.worker!.failed).toBe(true);
    expect(fx.workers.backoff.count(e.id, fx.now())).toBe(1);
  });
});

describe('lost hosts', () => {
  test("a host gone unreachable: its workers' jobs go back to the queue and the workers are replaced on another host without backoff", async () => {
    fx = await openWorkerFixture({ hosts: [{ id: 'host-a', gpus: 1 }, { id: 'host-b', gpus: 1 }] });
    const e = await fx.endpoint({ workersMax: 1 });
    const [job] = await fx.enqueue(e.id);
    await fx.scaler.tick();
    const [w1] = await fx.live(e.id);
    const lostHost = w1!.hostId!;
    await fx.markRunning(w1!.id);
    await fx.queue.take(e.id, w1!.id, { waitMs: 0 });
    await fx.workers.seen(w1!.id, { healthy: true, inProgress: [job!] });
    await fx.services.store.transact(async (tx) => {
      const h = (await tx.get('hosts', lostHost))!;
      tx.put('hosts', { ...h, status: 'UNREACHABLE', statusReason: 'missed 3 heartbeats: connection refused' });
    });
    await fx.scaler.tick();
    const r1 = (await fx.services.store.get('pods', w1!.id))!;
    expect(r1.worker!.retiredReason).toBe(`host ${lostHost} is unreachable (missed 3 heartbeats: connection refused)`);
    expect(r1.worker!.failed).toBe(false);
    const back = (await fx.queue.get(job!))!;
    expect(back.status).toBe('IN_QUEUE');
    expect(back.retries).toBe(1);
    // the next tick (no clock change: no backoff) places the replacement on the other host
    await fx.scaler.tick();
    const [w2] = await fx.live(e.id);
    expect(w2!.hostId).not.toBe(lostHost);
    expect(w2!.hostId).not.toBeNull();
  });
});

describe('versions and deletion', () => {
  test('an endpoint or template change rolls workers: new ones of the new version, old ones stop once they hold no job', async () => {
    fx = await openWorkerFixture();
    const e0 = await fx.endpoint({ workersMin: 1, workersMax: 2 });
    await fx.scaler.tick();
    const [old] = await fx.live(e0.id);
    await fx.workers.seen(old!.id, { healthy: true, inProgress: ['busy-job'] });
    const e1 = await fx.services.endpoints.update(fx.principal, e0.id, { env: { SHARED: 'v2' } });
    expect(e1.version).toBe(e0.version + 1);
    await fx.scaler.tick();
    let ws = await fx.live(e0.id);
    expect(ws.map((w) => [w.id === old!.id, w.worker.version])).toEqual([
      [true, e0.version],
      [false, e1.version],
    ]);
    expect((await fx.workers.views(e1)).find((v) => v.id === old!.id)!.isStale).toBe(true);
    // the old one finishes its job: it stops at once
    await fx.workers.seen(old!.id, { healthy: true, inProgress: [] });
    ws = await fx.live(e0.id);
    expect(ws.map((w) => w.worker.version)).toEqual([e1.version]);
    expect(ws[0]!.env.SHARED).toBe('v2');
    // a template change rolls them too
    await fx.services.templates.update(fx.principal, e1.templateId, { image: 'img:2' });
    const e2 = await fx.services.endpoints.get(fx.principal, e0.id);
    expect(e2.version).toBe(e1.version + 1);
    await fx.scaler.tick();
    expect((await fx.live(e0.id)).map((w) => [w.image, w.worker.version])).toEqual([['img:2', e2.version]]);
  });

  test('deleting an endpoint stops its workers', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 2 });
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(2);
    await fx.services.endpoints.delete(fx.principal, e.id);
    await fx.scaler.tick();
    expect(await fx.live(e.id)).toHaveLength(0);
    const all = await fx.all(e.id);
    for (const w of all) expect(w.worker.retiredReason).toBe('endpoint deleted');
  });
});

describe('billing and the pod interface', () => {
  test('a worker accrues to its endpoint as an endpoint record from placement until it stops; none as a pod', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    const open = await fx.services.store.list('billing', { accountId: fx.principal.accountId });
    expect(open).toEqual([expect.objectContaining({ kind: 'endpoint', resourceId: e.id, podId: w!.id, gpuTypeId: H100, rate: w!.costPerHr, endedAt: null })]);
    fx.advance(3_600_000);
    await fx.workers.recycle(w!.id, 'test');
    const closed = await fx.services.store.list('billing', { accountId: fx.principal.accountId, podId: w!.id });
    expect(closed).toHaveLength(1);
    expect(Date.parse(closed[0]!.endedAt!) - Date.parse(closed[0]!.startedAt)).toBe(3_600_000);
    const report = await fx.services.billing.records(fx.principal, { kind: 'endpoint', bucketSize: 'year' }, fx.now());
    expect(report.records.map((r) => r.endpointId)).toEqual([e.id]);
    expect(report.metadata.totals.totalAmount).toBeCloseTo(w!.costPerHr, 6);
    expect((await fx.services.billing.records(fx.principal, { kind: 'pod' }, fx.now())).records).toEqual([]);
  });

  test('workers are not pods: absent from the pod list, and 404 to get, act on or delete', async () => {
    fx = await openWorkerFixture();
    const e = await fx.endpoint({ workersMin: 1 });
    await fx.scaler.tick();
    const [w] = await fx.live(e.id);
    expect((await fx.services.pods.list(fx.principal, { includeTerminated: true })).map((p) => p.id)).not.toContain(w!.id);
    expect(await codeOf(fx.services.pods.get(fx.principal, w!.id))).toBe('NOT_FOUND');
    expect(await codeOf(fx.services.pods.applyAction(fx.principal, w!.id, 'stop'))).toBe('NOT_FOUND');
    expect(await codeOf(fx.services.pods.update(fx.principal, w!.id, { name: 'x' }))).toBe('NOT_FOUND');
    expect(await codeOf(fx.services.pods.delete(fx.principal, w!.id))).toBe('NOT_FOUND');
    expect((await fx.live(e.id))[0]!.desiredStatus).toBe('RUNNING');
  });
});
