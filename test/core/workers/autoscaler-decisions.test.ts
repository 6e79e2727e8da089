// The autoscaler's decisions (core/workers/autoscaler.ts) over the depth a real job queue reports:
// an EmbeddedJobQueue in a temp dir, with a clock the test moves by hand.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { decideScale, type ScalerEndpoint, type ScalerWorker } from '../../../core/workers/autoscaler.ts';
import { openFixture, job, type QueueFixture } from '../jobs/queue-fixture.ts';

const EP = 'ep-scale';
let fx: QueueFixture;

beforeEach(async () => {
  fx = await openFixture();
});
afterEach(async () => fx.cleanup());

const endpoint = (more: Partial<ScalerEndpoint> = {}): ScalerEndpoint => ({
  workersMin: 0,
  workersMax: 3,
  scalerType: 'QUEUE_DELAY',
  scalerValue: 4,
  idleTimeout: 5,
  version: 1,
  ...more,
});
const w = (id: string, state: ScalerWorker['state'], more: Partial<ScalerWorker> = {}): ScalerWorker => ({ id, state, stale: false, idleMs: 0, ...more });
const enqueue = async (n: number) => {
  for (let i = 0; i < n; i++) await fx.q.enqueue(job(EP));
};
const decide = async (e: ScalerEndpoint, workers: ScalerWorker[]) => decideScale({ endpoint: e, depth: await fx.q.depth(EP), workers });

describe('QUEUE_DELAY', () => {
  test('scales from zero as soon as a job is queued, without waiting scalerValue seconds', async () => {
    expect(await decide(endpoint(), [])).toEqual({ target: 0, create: 0, retire: [] });
    await enqueue(1);
    const d = await decide(endpoint(), []);
    expect(d.create).toBe(1);
    expect(d.target).toBe(1);
  });

  test('adds one worker per decision only while the oldest job has waited longer than scalerValue and fewer are starting than jobs wait', async () => {
    await enqueue(3);
    const starting = [w('a', 'INITIALIZING')];
    // a worker is already starting and the jobs are fresh: wait for it
    expect((await decide(endpoint(), starting)).create).toBe(0);
    fx.advance(4_001);
    expect((await decide(endpoint(), starting)).create).toBe(1);
    // three jobs, three starting: nothing more however long they wait
    const three = [w('a', 'INITIALIZING'), w('b', 'INITIALIZING'), w('c', 'INITIALIZING')];
    expect((await decide(endpoint({ workersMax: 10 }), three)).create).toBe(0);
  });

  test('a queued job that every worker is too busy to take starts one more at once', async () => {
    await enqueue(1);
    expect((await decide(endpoint(), [w('a', 'RUNNING'), w('b', 'RUNNING')])).create).toBe(1);
  });

  test('never more than workersMax', async () => {
    await enqueue(5);
    fx.advance(60_000);
    const full = [w('a', 'RUNNING'), w('b', 'RUNNING'), w('c', 'RUNNING')];
    expect(await decide(endpoint(), full)).toEqual({ target: 3, create: 0, retire: [] });
  });
});

describe('REQUEST_COUNT', () => {
  test('wants ceil((inQueue + inProgress) / scalerValue) workers, clamped to workersMax', async () => {
    const e = endpoint({ scalerType: 'REQUEST_COUNT', scalerValue: 2, workersMax: 4 });
    await enqueue(3);
    expect(await decide(e, [])).toMatchObject({ target: 2, create: 2 });
    // one taken: 2 queued + 1 in progress still wants 2
    await fx.q.take(EP, 'worker-1', { waitMs: 0 });
    expect(await decide(e, [w('worker-1', 'RUNNING')])).toMatchObject({ target: 2, create: 1 });
    await enqueue(20);
    expect(await decide(e, [w('worker-1', 'RUNNING')])).toMatchObject({ target: 4, create: 3 });
  });
});

describe('scaling down', () => {
  test('an idle worker stops only after idleTimeout seconds, and never below workersMin', async () => {
    const e = endpoint({ workersMin: 1, idleTimeout: 5 });
    const idle = (ms: number) => [w('a', 'IDLE', { idleMs: ms }), w('b', 'IDLE', { idleMs: ms + 100 })];
    expect((await decide(e, idle(4_000))).retire).toEqual([]);
    const d = await decide(e, idle(5_000));
    // the one idle longest goes; workersMin keeps the other
    expect(d.retire).toEqual([{ id: 'b', reason: 'idle for 5 s (idleTimeout 5 s)' }]);
    expect(d.target).toBe(1);
    expect((await decide(e, [w('a', 'IDLE', { idleMs: 600_000 })])).retire).toEqual([]);
  });

  test('no idle worker stops while a job is queued', async () => {
    await enqueue(1);
    expect((await decide(endpoint(), [w('a', 'IDLE', { idleMs: 60_000 })])).retire).toEqual([]);
  });

  test('a job in progress that no RUNNING worker accounts for holds scaling down for this decision', async () => {
    await enqueue(1);
    await fx.q.take(EP, 'a', { waitMs: 0 }); // taken since worker a last reported itself idle
    expect((await decide(endpoint(), [w('a', 'IDLE', { idleMs: 60_000 })])).retire).toEqual([]);
  });
});

describe('version changes', () => {
  test('stale workers stop when they hold no job, and new ones of the new version replace them', async () => {
    const e = endpoint({ workersMin: 2, version: 2 });
    const d = await decide(e, [w('old-idle', 'IDLE', { stale: true }), w('old-busy', 'RUNNING', { stale: true })]);
    expect(d.retire).toEqual([{ id: 'old-idle', reason: 'replaced by a worker of endpoint version 2' }]);
    expect(d.create).toBe(2);
  });
});
