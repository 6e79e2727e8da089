// Retention and ttl on a fake clock: results of `run` are kept 30 min, of `runsync` 1 min, then
// gone; a job not taken within its ttl expires (TIMED_OUT, then gone).
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { Job } from '../../core/jobs/index.ts';
import { codeOf, job, openFixture, type QueueFixture } from './contract-fixture.ts';

const MIN = 60_000;
let f: QueueFixture;
beforeEach(async () => {
  f = await openFixture();
});
afterEach(async () => {
  await f.cleanup();
});

async function completed(sync: boolean, ttl?: number): Promise<Job> {
  const a = await f.q.enqueue(job('ep-1', { sync, ...(ttl ? { policy: { ttl } } : {}) }));
  await f.q.take('ep-1', 'w-1');
  return f.q.complete(a.id, 'w-1', { output: 'result' });
}

test('a run result is kept 30 minutes after it is final, then it is gone (get, counts, status)', async () => {
  const a = await completed(false);
  expect(a.expiresAt).toBe(a.finishedAt! + 30 * MIN);
  f.advance(30 * MIN - 1);
  expect((await f.q.get(a.id))!.output).toBe('result');
  expect((await f.q.counts('ep-1')).completed).toBe(1);
  f.advance(1);
  expect(await f.q.get(a.id)).toBeUndefined();
  expect((await f.q.counts('ep-1')).completed).toBe(0);
  expect(await codeOf(f.q.cancel(a.id))).toBe('NOT_FOUND');
  expect(await f.q.readStream(a.id)).toBeUndefined();
});

test('a runsync result is kept 1 minute', async () => {
  const a = await completed(true);
  f.advance(MIN - 1);
  expect(await f.q.get(a.id)).toBeDefined();
  f.advance(1);
  expect(await f.q.get(a.id)).toBeUndefined();
});

test('a job not taken within its ttl is TIMED_OUT (onFinal told), gone at once, and never handed to a worker', async () => {
  const finals: Job[] = [];
  f.q.onFinal((j) => finals.push(j));
  const a = await f.q.enqueue(job('ep-1', { policy: { ttl: 10_000 } }));
  const b = await f.q.enqueue(job());
  f.advance(9_999);
  expect((await f.q.get(a.id))!.status).toBe('IN_QUEUE');
  f.advance(1);
  const taken = await f.q.take('ep-1', 'w-1', { max: 5 });
  expect(taken.map((j) => j.id)).toEqual([b.id]);
  expect(finals).toHaveLength(1);
  expect(finals[0]).toMatchObject({ id: a.id, status: 'TIMED_OUT' });
  expect(finals[0]!.error).toContain('ttl of 10000 ms');
  expect(await f.q.get(a.id)).toBeUndefined();
  await f.reopen();
  expect(await f.q.get(a.id)).toBeUndefined(); // not resurrected by replay
  expect(finals).toHaveLength(1);
});

test('a running job is not cut off by its ttl; its result stays at least a minute after it is final', async () => {
  const a = await f.q.enqueue(job('ep-1', { policy: { ttl: 10_000 } }));
  await f.q.take('ep-1', 'w-1');
  f.advance(20_000);
  await f.q.sweep();
  expect((await f.q.get(a.id))!.status).toBe('IN_PROGRESS');
  const done = await f.q.complete(a.id, 'w-1', { output: 1 });
  expect(done.expiresAt).toBe(done.finishedAt! + MIN);
  // finished within its ttl, the result goes when the ttl ends (but not before a minute)
  const b = await completed(false, 5 * MIN);
  expect(b.expiresAt).toBe(b.queuedAt + 5 * MIN);
});

test('retention holds across a restart: expired results are not replayed, live ones are', async () => {
  const old = await completed(true);
  f.advance(30_000);
  const fresh = await completed(false);
  f.advance(40_000); // `old` (1 min) expired, `fresh` (30 min) not
  await f.reopen();
  expect(await f.q.get(old.id)).toBeUndefined();
  expect((await f.q.get(fresh.id))!.output).toBe('result');
  expect((await f.q.counts('ep-1')).completed).toBe(1);
});
