// Fault: a job's completion is applied in memory while its fdatasync is held (a slow disk), and a
// status read (`get`) and a `counts` read arrive in that window. They must not answer with the
// COMPLETED that a crash right then would take back: they answer once the completion is durable.
import { mkdtemp, open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { EmbeddedJobQueue } from '../../../core/jobs/index.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { job } from './queue-fixture.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** holds every fdatasync of every FileHandle until released */
async function holdDatasync(dir: string): Promise<{ held: () => number; release: () => void; restore: () => void }> {
  const probe = await open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = proto.datasync;
  const waiting: (() => void)[] = [];
  let holding = true;
  proto.datasync = function (this: FileHandle) {
    if (!holding) return original.call(this);
    return new Promise<void>((resolve, reject) => waiting.push(() => void original.call(this).then(resolve, reject)));
  };
  const release = (): void => {
    holding = false;
    for (const w of waiting.splice(0)) w();
  };
  return { held: () => waiting.length, release, restore: () => ((proto.datasync = original), release()) };
}

test('a status read while a completion waits for its fdatasync answers only once it is durable, and then COMPLETED', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-durable-reads-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const q = await EmbeddedJobQueue.open({ dir, sweepIntervalMs: 0 });
  cleanups.push(() => q.close());
  const a = await q.enqueue(job());
  await q.take('ep-1', 'w-1');

  const disk = await holdDatasync(dir);
  cleanups.push(async () => disk.restore());
  let completed = false;
  const completion = q.complete(a.id, 'w-1', { output: 'done' }).then((j) => ((completed = true), j));
  // the completion's write reaches its fdatasync when the group commit runs (a loaded disk can take a while)
  await waitFor('the completion to wait for its fdatasync', async () => disk.held() > 0, 10_000, 5);
  expect(completed, 'the completion waits for its fdatasync').toBe(false);

  let answered: string | undefined;
  const read = q.get(a.id).then((j) => (answered = j?.status));
  const counts = q.counts('ep-1');
  await new Promise((r) => setTimeout(r, 100));
  expect(completed).toBe(false);
  expect(answered, 'no answer while the COMPLETED is not durable').toBeUndefined();

  disk.release();
  expect((await completion).status).toBe('COMPLETED');
  await read;
  expect(answered).toBe('COMPLETED');
  expect(await counts).toMatchObject({ completed: 1, inProgress: 0 });
});
