// The three queue operations the job interface added: `setTtl` (status `?ttl=`), a stream read that
// waits for a chunk or the final status instead of answering "nothing" at once (runpod-sdk's stream
// polls without a pause), and `heldBy` (what the worker side is told a worker holds).
import { afterEach, beforeEach, expect, test } from 'vitest';
import { codeOf, job, openFixture, type QueueFixture } from './contract-fixture.ts';

let f: QueueFixture;
beforeEach(async () => {
  f = await openFixture();
});
afterEach(async () => {
  await f.cleanup();
});

test('?ttl on a queued job: it expires that long after the call, not after its policy ttl; durable across a restart', async () => {
  const a = await f.q.enqueue(job());
  f.advance(5000);
  const set = await f.q.setTtl(a.id, 2000);
  expect(set.expiresAt).toBe(f.now() + 2000);
  await f.reopen();
  f.advance(1999);
  expect((await f.q.get(a.id))!.status).toBe('IN_QUEUE');
  f.advance(1);
  expect(await f.q.get(a.id)).toBeUndefined(); // a queued job past its ttl is gone at once
  expect(await f.q.take('ep-1', 'w-1')).toEqual([]);
});

test('?ttl on a final job shortens (or lengthens) how long its result is kept', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  await f.q.complete(a.id, 'w-1', { output: 'r' });
  await f.q.setTtl(a.id, 3000);
  f.advance(2999);
  expect((await f.q.get(a.id))!.output).toBe('r');
  f.advance(1);
  expect(await f.q.get(a.id)).toBeUndefined();

  const b = await f.q.enqueue(job('ep-1', { sync: true })); // a runsync result: 1 minute by default
  await f.q.take('ep-1', 'w-1');
  await f.q.complete(b.id, 'w-1', { output: 'kept' });
  await f.q.setTtl(b.id, 5 * 60_000);
  f.advance(4 * 60_000);
  expect((await f.q.get(b.id))!.output).toBe('kept');
});

test('?ttl on a running job does not stop it; its result is dropped when that ttl ends', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  await f.q.setTtl(a.id, 120_000);
  for (let i = 0; i < 7; i++) {
    f.advance(17_000); // heartbeats keep the lease (30 s) while the ttl runs out
    await f.q.heartbeat('w-1', [a.id]);
  }
  const done = await f.q.complete(a.id, 'w-1', { output: 'late' });
  expect(done.status).toBe('COMPLETED');
  // readable at least a minute after it is final even though the ttl ends in one second
  expect(done.expiresAt).toBe(done.finishedAt! + 60_000);
});

test('?ttl outside 1000..604800000 ms and on an unknown job is refused', async () => {
  const a = await f.q.enqueue(job());
  expect(await codeOf(f.q.setTtl(a.id, 999))).toBe('VALIDATION_FAILED');
  expect(await codeOf(f.q.setTtl(a.id, 604_800_001))).toBe('VALIDATION_FAILED');
  expect(await codeOf(f.q.setTtl('missing', 5000))).toBe('NOT_FOUND');
});

test('a waiting stream read is woken by the next chunk, and by the final status; it answers after waitMs otherwise', async () => {
  const a = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1');
  const t0 = Date.now();
  const waiting = f.q.readStream(a.id, undefined, { waitMs: 5000 });
  await new Promise((r) => setTimeout(r, 50));
  await f.q.appendStream(a.id, 'w-1', 'c1');
  expect(await waiting).toEqual({ status: 'IN_PROGRESS', chunks: ['c1'], next: 1 });
  expect(Date.now() - t0).toBeLessThan(2000);

  const waitingFinal = f.q.readStream(a.id, undefined, { waitMs: 5000 });
  await new Promise((r) => setTimeout(r, 50));
  await f.q.complete(a.id, 'w-1', { output: [] });
  expect(await waitingFinal).toEqual({ status: 'COMPLETED', chunks: [], next: 1 });

  const b = await f.q.enqueue(job());
  const t1 = Date.now();
  expect(await f.q.readStream(b.id, undefined, { waitMs: 200 })).toEqual({ status: 'IN_QUEUE', chunks: [], next: 0 });
  expect(Date.now() - t1).toBeGreaterThanOrEqual(190);
  // a read with chunks not yet returned answers at once
  await f.q.take('ep-1', 'w-2');
  await f.q.appendStream(b.id, 'w-2', 'x');
  const t2 = Date.now();
  expect((await f.q.readStream(b.id, undefined, { waitMs: 5000 }))!.chunks).toEqual(['x']);
  expect(Date.now() - t2).toBeLessThan(1000);
});

test('heldBy: the jobs a worker holds in progress, and nothing once they are final or requeued', async () => {
  const a = await f.q.enqueue(job());
  const b = await f.q.enqueue(job());
  await f.q.take('ep-1', 'w-1', { max: 2 });
  expect((await f.q.heldBy('w-1')).sort()).toEqual([a.id, b.id].sort());
  expect(await f.q.heldBy('w-2')).toEqual([]);
  await f.q.complete(a.id, 'w-1', {});
  await f.q.workerLost('w-1', 'gone');
  expect(await f.q.heldBy('w-1')).toEqual([]);
});
