// Long polls on real time: take, job-stop and waitForFinal are woken by the operation that makes
// them ready (no polling interval), and answer "nothing" on timeout or abort.
import { afterEach, beforeEach, expect, test } from 'vitest';
import { job, openFixture, type QueueFixture } from './contract-fixture.ts';

let f: QueueFixture;
beforeEach(async () => {
  // the real clock; the sweep timer off, so nothing but the enqueue can wake a take
  f = await openFixture({ clock: Date.now });
});
afterEach(async () => {
  await f.cleanup();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

test('a worker waiting in take receives a new job at once (wake-up latency printed)', async () => {
  const N = 300;
  const wake: number[] = [];
  const ack: number[] = [];
  for (let i = 0; i < N; i++) {
    const taking = f.q.take('ep-1', 'w-1', { waitMs: 30_000 });
    const t0 = performance.now();
    const enq = f.q.enqueue(job('ep-1', { input: { i } })).then(() => ack.push(performance.now() - t0));
    const [got] = await taking;
    wake.push(performance.now() - t0);
    await enq;
    expect(got!.input).toEqual({ i });
    await f.q.complete(got!.id, 'w-1', { output: i });
  }
  wake.sort((a, b) => a - b);
  ack.sort((a, b) => a - b);
  const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(3)} ms, p99 ${percentile(xs, 99).toFixed(3)} ms`;
  console.log(`take wake-up (enqueue called → waiting take resolves, fsync on): ${fmt(wake)}; enqueue ack: ${fmt(ack)}`);
  // one group commit carries both the enqueue and the take: waking adds nothing like a poll interval
  expect(percentile(wake, 50)).toBeLessThan(percentile(ack, 50) + 2);
  expect(percentile(wake, 50)).toBeLessThan(20);
});

test('take answers [] when nothing comes within waitMs, and at once when its request is aborted', async () => {
  let t = performance.now();
  expect(await f.q.take('ep-1', 'w-1', { waitMs: 150 })).toEqual([]);
  expect(performance.now() - t).toBeGreaterThanOrEqual(140);
  const ac = new AbortController();
  t = performance.now();
  const parked = f.q.take('ep-1', 'w-1', { waitMs: 30_000, signal: ac.signal });
  setTimeout(() => ac.abort(), 20);
  expect(await parked).toEqual([]);
  expect(performance.now() - t).toBeLessThan(1000);
  // the aborted waiter is gone: a new job waits in the queue instead of vanishing into it
  const a = await f.q.enqueue(job());
  expect((await f.q.get(a.id))!.status).toBe('IN_QUEUE');
});

test('several waiting workers: each new job goes to exactly one, oldest waiter first; a batch take gets up to max', async () => {
  const waiting = ['w-1', 'w-2', 'w-3'].map((w) => f.q.take('ep-1', w, { waitMs: 30_000 }).then((jobs) => ({ w, jobs })));
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await f.q.enqueue(job())).id);
  const got = await Promise.all(waiting);
  expect(got.map((g) => [g.w, g.jobs.map((j) => j.id)])).toEqual([
    ['w-1', [ids[0]]],
    ['w-2', [ids[1]]],
    ['w-3', [ids[2]]],
  ]);
  for (let i = 0; i < 5; i++) await f.q.enqueue(job());
  expect(await f.q.take('ep-1', 'w-4', { max: 3, waitMs: 30_000 })).toHaveLength(3);
  expect(await f.q.take('ep-1', 'w-4', { max: 3, waitMs: 30_000 })).toHaveLength(2);
});

test('job-stop: a waiting worker learns at once that its running job was cancelled; [] on timeout', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  expect(await f.q.stopRequests('w-1', { waitMs: 50 })).toEqual([]);
  const t0 = performance.now();
  const stop = f.q.stopRequests('w-1', { waitMs: 30_000 });
  await f.q.cancel(a.id);
  expect(await stop).toEqual([a.id]);
  expect(performance.now() - t0).toBeLessThan(1000);
  expect(await f.q.stopRequests('w-1', { waitMs: 0 })).toEqual([]); // handed out once
});

test('waitForFinal resolves when the job completes, with the current state on timeout, undefined for an unknown job', async () => {
  const a = await f.q.enqueue(job());
  expect(await f.q.waitForFinal(a.id, { waitMs: 50 })).toMatchObject({ id: a.id, status: 'IN_QUEUE' });
  const waiting = f.q.waitForFinal(a.id, { waitMs: 30_000 });
  const [taken] = await f.q.take('ep-1', 'w-1');
  await f.q.complete(taken!.id, 'w-1', { output: 'done' });
  expect(await waiting).toMatchObject({ status: 'COMPLETED', output: 'done' });
  expect(await f.q.waitForFinal(a.id, { waitMs: 30_000 })).toMatchObject({ status: 'COMPLETED' });
  expect(await f.q.waitForFinal('missing', { waitMs: 30_000 })).toBeUndefined();
});

test('workerLost answers the lost worker\'s parked take and job-stop polls with []', async () => {
  const take = f.q.take('ep-1', 'w-1', { waitMs: 30_000 });
  const stop = f.q.stopRequests('w-1', { waitMs: 30_000 });
  await f.q.workerLost('w-1', 'container exited');
  expect(await take).toEqual([]);
  expect(await stop).toEqual([]);
  expect((await f.q.depth('ep-1')).waitingWorkers).toBe(0);
});
