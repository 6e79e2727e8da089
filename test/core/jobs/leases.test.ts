// Leases, lost workers, retry caps and execution timeouts, on a fake clock.
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { RecycleEvent } from '../../../core/jobs/index.ts';
import { codeOf, job, openFixture, type QueueFixture } from './contract-fixture.ts';

let f: QueueFixture;
beforeEach(async () => {
  f = await openFixture({ leaseMs: 10_000 });
});
afterEach(async () => {
  await f.cleanup();
});

test('lease expiry requeues the job with its retry counted; the silent worker can no longer complete it', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  f.advance(9_999);
  await f.q.sweep();
  expect((await f.q.get(a.id))!.status).toBe('IN_PROGRESS');
  f.advance(1);
  await f.q.sweep();
  expect(await f.q.get(a.id)).toMatchObject({ status: 'IN_QUEUE', retries: 1, autoRetries: 1 });
  expect(await f.q.stopRequests('w-1')).toEqual([a.id]); // if the worker is alive after all, it stops
  expect(await codeOf(f.q.complete(a.id, 'w-1', { output: 'late' }))).toBe('JOB_LEASE_LOST');
  const [again] = await f.q.take('ep-1', 'w-2');
  expect(again).toMatchObject({ id: a.id, workerId: 'w-2', delayTime: 10_000 });
  expect(await codeOf(f.q.complete(a.id, 'w-1', { output: 'late' }))).toBe('JOB_LEASE_LOST');
  expect(await f.q.complete(a.id, 'w-2', { output: 'ok' })).toMatchObject({ status: 'COMPLETED', output: 'ok', retries: 1 });
});

test('heartbeats, progress and stream chunks keep a lease; a heartbeat after expiry does not revive it', async () => {
  const a = await f.q.enqueue(job());
  const b = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1', { max: 2 });
  for (let i = 0; i < 3; i++) {
    f.advance(8_000);
    expect(await f.q.heartbeat('w-1', [a.id, 'unknown-job'])).toEqual({ renewed: [a.id], notHeld: ['unknown-job'] });
    await f.q.progress(b.id, 'w-1', { step: i });
  }
  f.advance(8_000);
  await f.q.appendStream(a.id, 'w-1', 'tok');
  await f.q.sweep();
  expect((await f.q.get(a.id))!.status).toBe('IN_PROGRESS');
  expect((await f.q.get(b.id))!.status).toBe('IN_PROGRESS');
  f.advance(10_000);
  expect(await f.q.heartbeat('w-1', [a.id, b.id])).toEqual({ renewed: [], notHeld: [a.id, b.id] });
  expect((await f.q.get(a.id))!.status).toBe('IN_QUEUE');
});

test('workerLost requeues its jobs with retries counted; past the cap of 3 the job is FAILED with the reason', async () => {
  const a = await f.q.enqueue(job());
  for (let attempt = 1; attempt <= 3; attempt++) {
    await f.q.take('ep-1', `w-${attempt}`);
    const [lost] = await f.q.workerLost(`w-${attempt}`, 'container exited 137');
    expect(lost).toMatchObject({ status: 'IN_QUEUE', retries: attempt, autoRetries: attempt });
  }
  await f.q.take('ep-1', 'w-4');
  const [failed] = await f.q.workerLost('w-4', 'host lost');
  expect(failed).toMatchObject({ status: 'FAILED', retries: 3 });
  expect(failed!.error).toContain('w-4: host lost');
  expect(await f.q.counts('ep-1')).toMatchObject({ failed: 1, retried: 1, inQueue: 0 });
  // a user retry resets the automatic count: the job gets its three retries again
  await f.q.retry(a.id);
  await f.q.take('ep-1', 'w-5');
  expect((await f.q.workerLost('w-5', 'again'))[0]).toMatchObject({ status: 'IN_QUEUE', retries: 5, autoRetries: 1 });
  expect(await f.q.workerLost('nobody', 'x')).toEqual([]);
});

test('workerLost with job ids (the worker lives on): they go back to the queue, and no stop request waits to end the attempt it takes next', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  expect(await f.q.workerLost('w-1', 'its result never arrived', [a.id])).toEqual([expect.objectContaining({ id: a.id, status: 'IN_QUEUE', retries: 1 })]);
  const [again] = await f.q.take('ep-1', 'w-1');
  expect(again).toMatchObject({ id: a.id, status: 'IN_PROGRESS', workerId: 'w-1' });
  expect(await f.q.stopRequests('w-1')).toEqual([]);
  expect(await f.q.complete(a.id, 'w-1', { output: 'second attempt' })).toMatchObject({ status: 'COMPLETED', retries: 1 });
});

test('executionTimeout: TIMED_OUT, the worker is named for recycling and told to stop; its late result is refused', async () => {
  const recycled: RecycleEvent[] = [];
  f.q.onRecycle((e) => recycled.push(e));
  const a = await f.q.enqueue(job('ep-1', { policy: { executionTimeout: 5_000 } }));
  await f.q.take('ep-1', 'w-1');
  f.advance(4_000);
  await f.q.heartbeat('w-1', [a.id]);
  f.advance(1_000);
  await f.q.sweep();
  expect(await f.q.get(a.id)).toMatchObject({ status: 'TIMED_OUT', executionTime: 5_000, workerId: 'w-1' });
  expect((await f.q.get(a.id))!.error).toContain('execution timeout of 5000 ms');
  expect(recycled).toEqual([{ workerId: 'w-1', jobId: a.id, reason: 'execution-timeout' }]);
  expect(await f.q.stopRequests('w-1')).toEqual([a.id]);
  expect(await codeOf(f.q.complete(a.id, 'w-1', { output: 'too late' }))).toBe('JOB_ALREADY_FINAL');
  expect(await f.q.counts('ep-1')).toMatchObject({ failed: 1, inProgress: 0 });
});

test('a take whose caller went away before it was durable is released without counting a retry', async () => {
  const a = await f.q.enqueue(job());
  const ac = new AbortController();
  const taking = f.q.take('ep-1', 'w-1', { signal: ac.signal });
  ac.abort(); // the HTTP request closed while the take's fsync was in flight
  expect(await taking).toEqual([]);
  expect(await f.q.get(a.id)).toMatchObject({ status: 'IN_QUEUE', retries: 0, autoRetries: 0 });
  expect((await f.q.take('ep-1', 'w-2'))[0]!.id).toBe(a.id);
});

test('leases survive a restart: running jobs keep their worker, get a fresh lease, and are requeued when it ends', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  f.advance(9_000); // most of the lease used before the restart
  await f.reopen({ leaseMs: 10_000 });
  f.advance(9_000);
  await f.q.sweep();
  expect(await f.q.get(a.id)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w-1' });
  expect(await f.q.heartbeat('w-1', [a.id])).toEqual({ renewed: [a.id], notHeld: [] });
  f.advance(10_000);
  await f.q.sweep();
  expect(await f.q.get(a.id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
});
