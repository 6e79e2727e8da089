// Retention and ttl on a fake clock: results of `run` are kept 30 min, of `runsync` 1 min, then
// gone; a job not taken within its ttl expires (TIMED_OUT, then gone).
import { afterEach, beforeEach, expect, test } from 'vitest';
import { codeOf, job, openFixture, type QueueFixture } from './contract-fixture.ts';
import type { Job } from '../../../model/index.ts';

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

test('completedJobs pages the retained COMPLETED jobs of an endpoint in (finishedAt, id) order; expired, other statuses and other endpoints are left out', async () => {
  await completed(true);
  f.advance(MIN + 1); // that runsync result (1 min) expired: not in any page
  const three = [await f.q.enqueue(job()), await f.q.enqueue(job()), await f.q.enqueue(job())];
  await f.q.take('ep-1', 'w-1', { max: 3 });
  for (const j of three) await f.q.complete(j.id, 'w-1', { output: 'same ms' });
  const failed = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  await f.q.complete(failed.id, 'w-1', { error: 'boom' });
  await f.q.cancel((await f.q.enqueue(job())).id);
  const other = await f.q.enqueue(job('ep-2'));
  await f.q.take('ep-2', 'w-2');
  await f.q.complete(other.id, 'w-2', { output: 1 });
  f.advance(5);
  const last = await completed(false);
  const order = [...three.map((j) => j.id).sort(), last.id];
  const pages = async (): Promise<string[][]> => {
    const out: string[][] = [];
    for (let after = { finishedAt: 0, id: '' }; ; ) {
      const page = await f.q.completedJobs!('ep-1', after, 2);
      if (page.length === 0) return out;
      out.push(page.map((j) => j.id));
      after = { finishedAt: page.at(-1)!.finishedAt!, id: page.at(-1)!.id };
    }
  };
  expect(await pages()).toEqual([order.slice(0, 2), order.slice(2)]);
  expect((await f.q.completedJobs!('ep-1', { finishedAt: last.finishedAt!, id: '' }, 10)).map((j) => j.id)).toEqual([last.id]);
  await f.reopen();
  expect(await pages()).toEqual([order.slice(0, 2), order.slice(2)]);
  f.advance(30 * MIN);
  expect(await f.q.completedJobs!('ep-1', { finishedAt: 0, id: '' }, 10)).toEqual([]);
});
