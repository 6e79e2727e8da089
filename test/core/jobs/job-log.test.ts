// The queue's own log: replay, group commit, torn-tail repair, corruption refused with file:line,
// permissions, and compaction (also interrupted).
import { appendFile, copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { EmbeddedJobQueue } from '../../../core/jobs/index.ts';
import { codeOf, job, openFixture, type QueueFixture } from './queue-fixture.ts';
import type { Job } from '../../../model/index.ts';

let f: QueueFixture;
beforeEach(async () => {
  f = await openFixture();
});
afterEach(async () => {
  await f.cleanup();
});

const WAL0 = 'wal-000000000000.log';
const withoutLease = ({ leaseExpiresAt: _l, ...rest }: Job) => rest;

async function mixedHistory(): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await f.q.enqueue(job(i % 2 ? 'ep-1' : 'ep-2', { input: { i }, policy: { lowPriority: i === 3 } }))).id);
  const taken = await f.q.take('ep-1', 'w-1', { max: 4 });
  await f.q.progress(taken[0]!.id, 'w-1', { pct: 10 });
  await f.q.appendStream(taken[0]!.id, 'w-1', 'chunk-1');
  await f.q.complete(taken[1]!.id, 'w-1', { output: { ok: true } });
  await f.q.complete(taken[2]!.id, 'w-1', { error: 'bad' });
  await f.q.cancel(ids[10]!);
  await f.q.retry(taken[2]!.id);
  return ids;
}

test('every acknowledged change is replayed on open, the same as before', async () => {
  const ids = await mixedHistory();
  const before = await Promise.all(ids.map((id) => f.q.get(id)));
  await f.reopen();
  const after = await Promise.all(ids.map((id) => f.q.get(id)));
  expect(after.map((j) => withoutLease(j!))).toEqual(before.map((j) => withoutLease(j!)));
  expect(await f.q.counts('ep-1')).toEqual({ completed: 1, failed: 0, inProgress: 2, inQueue: 3, retried: 1 });
  expect((await f.q.readStream(ids[1]!))?.chunks).toEqual(['chunk-1']); // the first taken job's stream
});

test('concurrent writes share one fsync (group commit)', async () => {
  const N = 200;
  const c0 = f.q.logStats().commits;
  await Promise.all(Array.from({ length: N }, () => f.q.enqueue(job())));
  const commits = f.q.logStats().commits - c0;
  console.log(`group commit: ${N} concurrent enqueues in ${commits} write+fdatasync rounds`);
  expect(commits).toBeLessThanOrEqual(3);
});

test('a torn last record is cut off on open, with everything acknowledged before it kept', async () => {
  const ids = await mixedHistory();
  const file = path.join(f.dir, WAL0);
  const size = (await stat(file)).size;
  const lines = (await readFile(file, 'utf8')).split('\n').length - 1;
  await appendFile(file, '3f2a01bc {"t":"enq","job":{"id":"half-writ'); // the process died mid-write
  await f.reopen();
  expect(f.q.repairs).toEqual([{ file, line: lines + 1, offset: size, reason: 'incomplete last record (no newline)' }]);
  expect((await stat(file)).size).toBe(size);
  for (const id of ids) expect(await f.q.get(id)).toBeDefined();
  const after = await f.q.enqueue(job()); // writable again, and the repair does not repeat
  await f.reopen();
  expect(f.q.repairs).toEqual([]);
  expect(await f.q.get(after.id)).toBeDefined();
});

test('a damaged record with valid records after it is refused on open, naming the file and line', async () => {
  await mixedHistory();
  await f.q.close();
  const file = path.join(f.dir, WAL0);
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines[4] = lines[4]!.replace('"t":"', '"t" :"'); // one byte changed: the checksum no longer matches
  await writeFile(file, lines.join('\n'));
  const err = await EmbeddedJobQueue.open({ dir: f.dir, sweepIntervalMs: 0 }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'JOB_LOG_CORRUPT', fields: { file, line: 5 } });
  expect((err as Error).message).toContain(`${file}:5: checksum mismatch (recorded `);
  expect((err as Error).message).toContain('and valid records follow it');
  f.q = await EmbeddedJobQueue.open({ dir: path.join(f.dir, 'other'), sweepIntervalMs: 0 }); // for cleanup
});

test('the log directory is 0700 and its files 0600, the snapshot too', async () => {
  await mixedHistory();
  await f.q.compact();
  await f.q.enqueue(job());
  expect((await stat(f.dir)).mode & 0o777).toBe(0o700);
  const files = await readdir(f.dir);
  expect(files.sort()).toEqual(['snap-000000000001.log', 'wal-000000000001.log']);
  for (const name of files) expect((await stat(path.join(f.dir, name))).mode & 0o777).toBe(0o600);
});

test('compaction keeps only live jobs, and the state after reopen is the same', async () => {
  const ids = await mixedHistory();
  for (let i = 0; i < 300; i++) {
    const a = await f.q.enqueue(job('ep-3', { sync: true, input: 'x'.repeat(500) }));
    await f.q.take('ep-3', 'w-3');
    await f.q.complete(a.id, 'w-3', { output: 'y'.repeat(500) });
  }
  f.advance(2 * 60_000); // the runsync results have expired; the rest is within 30 min
  const before = await Promise.all(ids.map((id) => f.q.get(id)));
  const walBefore = (await stat(path.join(f.dir, WAL0))).size;
  const compacting = f.q.compact();
  const during = await f.q.enqueue(job('ep-1', { input: 'written during compaction' })); // goes to the new generation
  await compacting;
  const snap = (await stat(path.join(f.dir, 'snap-000000000001.log'))).size;
  console.log(`compaction: log ${walBefore} bytes → snapshot ${snap} bytes`);
  expect(snap).toBeLessThan(walBefore / 20);
  await f.reopen();
  expect((await Promise.all(ids.map((id) => f.q.get(id)))).map((j) => withoutLease(j!))).toEqual(before.map((j) => withoutLease(j!)));
  expect((await f.q.get(during.id))!.input).toBe('written during compaction');
  expect((await f.q.counts('ep-3')).completed).toBe(0);
});

test('an interrupted compaction: a leftover temp snapshot is ignored, generations a snapshot covers are dropped', async () => {
  const ids = await mixedHistory();
  const saved = path.join(path.dirname(f.dir), 'wal0.copy');
  await copyFile(path.join(f.dir, WAL0), saved);
  await f.q.compact();
  const a = await f.q.enqueue(job());
  await f.q.close();
  // as if the process died after the rename but before deleting generation 0, mid-way through the next compaction
  await copyFile(saved, path.join(f.dir, WAL0));
  await writeFile(path.join(f.dir, 'snap-000000000002.log.tmp'), 'half a snapshot');
  f.q = await EmbeddedJobQueue.open({ dir: f.dir, clock: f.now, sweepIntervalMs: 0 });
  expect((await readdir(f.dir)).sort()).toEqual(['snap-000000000001.log', 'wal-000000000001.log']);
  for (const id of [...ids, a.id]) expect(await f.q.get(id)).toBeDefined();
  expect(await f.q.counts('ep-1')).toEqual({ completed: 1, failed: 0, inProgress: 2, inQueue: 4, retried: 1 });
  expect(await codeOf(f.q.retry(ids[10]!))).toBe('INVALID_TRANSITION'); // still CANCELLED, not resurrected
});
