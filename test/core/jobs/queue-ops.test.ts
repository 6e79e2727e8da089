// Every client-side operation of the embedded job queue, on a fake clock: submission and its
// validation, take order, progress, completion, cancel, retry, purge, counts, depth, delete.
import { afterEach, beforeEach, expect, test } from 'vitest';
import { codeOf, job, openFixture, T0, type QueueFixture } from './contract-fixture.ts';
import type { Job } from '../../../model/index.ts';

let f: QueueFixture;
beforeEach(async () => {
  f = await openFixture();
});
afterEach(async () => {
  await f.cleanup();
});

test('enqueue answers an IN_QUEUE job with the public defaults; runsync ids start with sync-', async () => {
  const a = await f.q.enqueue(job());
  expect(a).toMatchObject({ status: 'IN_QUEUE', createdAt: T0, queuedAt: T0, retries: 0, sync: false });
  expect(a.policy).toEqual({ executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false });
  expect(a.expiresAt).toBe(T0 + 86_400_000);
  expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
  const s = await f.q.enqueue(job('ep-1', { sync: true, policy: { ttl: 60_000 } }));
  expect(s.id).toMatch(/^sync-[0-9a-f-]{36}$/);
  expect(s.policy.ttl).toBe(60_000);
  expect(await f.q.get(a.id)).toEqual(a);
});

test('enqueue refuses a missing input and out-of-range policy with JSONPath errors and stores nothing', async () => {
  const err = await f.q.enqueue({ ...job(), input: undefined, policy: { ttl: 7 * 86_400_000 + 1, executionTimeout: 1000 } }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'VALIDATION_FAILED', status: 422 });
  const errors = (err as { errors: string[] }).errors;
  expect(errors.map((e) => e.split(':')[0])).toEqual(['$.input', '$.policy.executionTimeout', '$.policy.ttl']);
  expect(await f.q.counts('ep-1')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });
  expect(await f.stored()).toBe(0);
});

test('take serves requeued jobs first, then FIFO, lowPriority last; IN_PROGRESS under a lease with delayTime', async () => {
  const low = await f.q.enqueue(job('ep-1', { policy: { lowPriority: true } }));
  const b = await f.q.enqueue(job());
  const c = await f.q.enqueue(job());
  const d = await f.q.enqueue(job());
  f.advance(250);
  const first = await f.q.take('ep-1', 'w-1', { max: 2 });
  expect(first.map((j) => j.id)).toEqual([b.id, c.id]);
  for (const j of first) {
    expect(j).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w-1', startedAt: T0 + 250, delayTime: 250, leaseExpiresAt: T0 + 250 + 30_000 });
  }
  await f.q.workerLost('w-1', 'container exited 137'); // b and c go back, ahead of d
  const order = [];
  for (let i = 0; i < 4; i++) order.push((await f.q.take('ep-1', 'w-2'))[0]!.id);
  expect(order).toEqual([b.id, c.id, d.id, low.id]);
  expect(await f.q.take('ep-1', 'w-2')).toEqual([]);
  expect(await f.q.take('ep-other', 'w-2')).toEqual([]);
  expect(await codeOf(f.q.take('ep-1', 'w-2', { max: 0 }))).toBe('VALIDATION_FAILED');
});

test('progress is an IN_PROGRESS update, not final; complete makes it COMPLETED with executionTime', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  f.advance(40);
  const p = await f.q.progress(a.id, 'w-1', { percent: 50 });
  expect(p).toMatchObject({ status: 'IN_PROGRESS', output: { percent: 50 } });
  expect((await f.q.get(a.id))!.status).toBe('IN_PROGRESS');
  f.advance(60);
  const done = await f.q.complete(a.id, 'w-1', { output: { text: 'hi' } });
  expect(done).toMatchObject({ status: 'COMPLETED', output: { text: 'hi' }, executionTime: 100, delayTime: 0, finishedAt: T0 + 100, workerId: 'w-1' });
  expect(done.leaseExpiresAt).toBeUndefined();
});

test('a completion is accepted once, from the lease holder only', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  expect(await codeOf(f.q.complete(a.id, 'w-2', { output: 'stolen' }))).toBe('JOB_LEASE_LOST');
  expect(await codeOf(f.q.progress(a.id, 'w-2', 1))).toBe('JOB_LEASE_LOST');
  expect(await codeOf(f.q.appendStream(a.id, 'w-2', 1))).toBe('JOB_LEASE_LOST');
  // two completions racing: exactly one is accepted (which one is the store's to decide: on
  // PostgreSQL the two run on two connections), and the job keeps the accepted one's output
  const both = await Promise.allSettled([f.q.complete(a.id, 'w-1', { output: 1 }), f.q.complete(a.id, 'w-1', { output: 2 })]);
  expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  const won = both.findIndex((r) => r.status === 'fulfilled');
  expect((both[1 - won] as PromiseRejectedResult).reason).toMatchObject({ code: 'JOB_ALREADY_FINAL', status: 409, fields: { status: 'COMPLETED' } });
  expect((await f.q.get(a.id))!.output).toBe(won + 1);
  expect(await codeOf(f.q.complete('no-such-job', 'w-1', {}))).toBe('NOT_FOUND');
});

test('a handler error is FAILED with the error and output, not retried by default; retried under maxErrorRetries', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  const failed = await f.q.complete(a.id, 'w-1', { error: '{"error_type":"ValueError"}', output: { partial: true } });
  expect(failed).toMatchObject({ status: 'FAILED', error: '{"error_type":"ValueError"}', output: { partial: true }, retries: 0 });

  const g = await openFixture({ maxErrorRetries: 1 });
  try {
    const b = await g.q.enqueue(job());
    await g.q.take('ep-1', 'w-1');
    expect(await g.q.complete(b.id, 'w-1', { error: 'boom 1' })).toMatchObject({ status: 'IN_QUEUE', retries: 1, autoRetries: 1 });
    await g.q.take('ep-1', 'w-2');
    expect(await g.q.complete(b.id, 'w-2', { error: 'boom 2' })).toMatchObject({ status: 'FAILED', error: 'boom 2', retries: 1 });
  } finally {
    await g.cleanup();
  }
});

test('cancel: queued never runs, running stops its worker, again is a no-op, a COMPLETED job refuses', async () => {
  const queued = await f.q.enqueue(job());
  const running = await f.q.enqueue(job());
  const done = await f.q.enqueue(job());
  expect(await f.q.cancel(queued.id)).toMatchObject({ status: 'CANCELLED' });
  const [r1, r2] = await f.q.take('ep-1', 'w-1', { max: 5 });
  expect([r1!.id, r2!.id]).toEqual([running.id, done.id]); // the cancelled job was not served
  await f.q.complete(done.id, 'w-1', { output: 1 });
  expect(await f.q.cancel(running.id)).toMatchObject({ status: 'CANCELLED', executionTime: 0 });
  expect(await f.q.stopRequests('w-1')).toEqual([running.id]);
  expect(await f.q.cancel(running.id)).toMatchObject({ status: 'CANCELLED' });
  expect(await codeOf(f.q.cancel(done.id))).toBe('INVALID_TRANSITION');
  expect(await codeOf(f.q.complete(running.id, 'w-1', { output: 'late' }))).toBe('JOB_ALREADY_FINAL');
});

test('retry: FAILED and TIMED_OUT jobs go back to IN_QUEUE under the same id; other statuses refuse', async () => {
  const a = await f.q.enqueue(job('ep-1', { policy: { executionTimeout: 5000 } }));
  const b = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1', { max: 2 });
  await f.q.complete(b.id, 'w-1', { error: 'bad input' });
  f.advance(5000);
  await f.q.sweep();
  expect((await f.q.get(a.id))!.status).toBe('TIMED_OUT');
  f.advance(1000);
  for (const id of [a.id, b.id]) {
    const again = await f.q.retry(id);
    expect(again).toMatchObject({ id, status: 'IN_QUEUE', retries: 1, autoRetries: 0, queuedAt: f.now() });
    expect(again.error).toBeUndefined();
  }
  expect(await codeOf(f.q.retry(a.id))).toBe('INVALID_TRANSITION'); // IN_QUEUE now
  expect((await f.q.take('ep-1', 'w-2', { max: 2 })).map((j) => j.id).sort()).toEqual([a.id, b.id].sort());
  expect(await codeOf(f.q.retry('missing'))).toBe('NOT_FOUND');
});

test('purge cancels the queued jobs of one endpoint and answers how many', async () => {
  const running = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  const queued = await Promise.all([f.q.enqueue(job()), f.q.enqueue(job('ep-1', { policy: { lowPriority: true } }))]);
  const other = await f.q.enqueue(job('ep-2'));
  expect(await f.q.purge('ep-1')).toBe(2);
  for (const j of queued) expect((await f.q.get(j.id))!.status).toBe('CANCELLED');
  expect((await f.q.get(running.id))!.status).toBe('IN_PROGRESS');
  expect((await f.q.get(other.id))!.status).toBe('IN_QUEUE');
  expect(await f.q.purge('ep-1')).toBe(0);
});

test('counts and depth follow every transition', async () => {
  const ids: Job[] = [];
  for (let i = 0; i < 5; i++) ids.push(await f.q.enqueue(job()));
  await f.q.enqueue(job('ep-1', { policy: { lowPriority: true } }));
  f.advance(2000);
  expect(await f.q.depth('ep-1')).toEqual({ inQueue: 5, lowPriority: 1, inProgress: 0, oldestAgeMs: 2000, waitingWorkers: 0 });
  await f.q.take('ep-1', 'w-1', { max: 4 });
  await f.q.complete(ids[0]!.id, 'w-1', { output: 1 });
  await f.q.complete(ids[1]!.id, 'w-1', { error: 'x' });
  await f.q.workerLost('w-1', 'gone'); // ids[2], ids[3] requeued
  expect(await f.q.counts('ep-1')).toEqual({ completed: 1, failed: 1, inProgress: 0, inQueue: 4, retried: 2 });
  const parked = f.q.take('ep-2', 'w-9', { waitMs: 5000 });
  expect((await f.q.depth('ep-2')).waitingWorkers).toBe(1);
  await f.q.enqueue(job('ep-2'));
  expect(await parked).toHaveLength(1);
  expect(await f.q.depth('ep-2')).toEqual({ inQueue: 0, lowPriority: 0, inProgress: 1, oldestAgeMs: 0, waitingWorkers: 0 });
});

test('deleteEndpoint cancels queued and running jobs, tells onFinal and the workers, then removes them for good', async () => {
  const finals: string[] = [];
  f.q.onFinal((j) => finals.push(`${j.id}:${j.status}`));
  const running = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  const done = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-2');
  await f.q.complete(done.id, 'w-2', { output: 1 });
  const queued = await f.q.enqueue(job());
  const keep = await f.q.enqueue(job('ep-2'));
  finals.length = 0;
  expect(await f.q.deleteEndpoint('ep-1')).toEqual({ cancelled: 2, removed: 3 });
  expect(finals.sort()).toEqual([`${running.id}:CANCELLED`, `${queued.id}:CANCELLED`].sort());
  expect(await f.q.stopRequests('w-1')).toEqual([running.id]);
  for (const j of [running, queued, done]) expect(await f.q.get(j.id)).toBeUndefined();
  expect(await f.q.counts('ep-1')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });
  await f.reopen();
  for (const j of [running, queued, done]) expect(await f.q.get(j.id)).toBeUndefined();
  expect((await f.q.get(keep.id))!.status).toBe('IN_QUEUE');
});

test('stream: each read returns only the chunks not returned before; a final job reads an empty stream', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  expect(await f.q.readStream(a.id)).toEqual({ status: 'IN_PROGRESS', chunks: [], next: 0 });
  await f.q.appendStream(a.id, 'w-1', { token: 'a' });
  await f.q.appendStream(a.id, 'w-1', { token: 'b' });
  expect(await f.q.readStream(a.id)).toEqual({ status: 'IN_PROGRESS', chunks: [{ token: 'a' }, { token: 'b' }], next: 2 });
  await f.q.appendStream(a.id, 'w-1', { token: 'c' });
  expect((await f.q.readStream(a.id))!.chunks).toEqual([{ token: 'c' }]);
  await f.q.complete(a.id, 'w-1', { output: [] });
  expect(await f.q.readStream(a.id)).toEqual({ status: 'COMPLETED', chunks: [], next: 3 });
  expect((await f.q.readStream(a.id, 1))!.chunks).toEqual([{ token: 'b' }, { token: 'c' }]);
  expect(await codeOf(f.q.appendStream(a.id, 'w-1', 'late'))).toBe('JOB_ALREADY_FINAL');
  expect(await f.q.readStream('missing')).toBeUndefined();
});

test('onFinal is told once per final job, after it is durable; unsubscribing stops it', async () => {
  const seen: Job[] = [];
  const off = f.q.onFinal((j) => seen.push(j));
  f.q.onFinal(() => {
    throw new Error('a broken listener does not break the queue');
  });
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  const durableBefore = await f.durableMark();
  await f.q.complete(a.id, 'w-1', { output: 7 });
  expect(seen.map((j) => [j.id, j.status, j.output])).toEqual([[a.id, 'COMPLETED', 7]]);
  expect(await f.durableMark()).toBeGreaterThan(durableBefore);
  off();
  const b = await f.q.enqueue(job());
  await f.q.cancel(b.id);
  expect(seen).toHaveLength(1);
});
