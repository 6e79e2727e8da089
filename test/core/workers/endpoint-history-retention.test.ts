// The stored endpoint metrics are bounded to 24 hours (core/workers/endpoint-history-store.ts): on an
// embedded store, with the history's clock moved, a slot recorded 25 hours ago is neither written nor
// kept, one a stored record of another writer left from 25 hours ago is swept at the first sample,
// and a slot of an hour ago is written and read back by a second history (another writer).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Job } from '../../../model/index.ts';
import { LowdbStore } from '../../../store/index.ts';
import { EndpointHistory, HISTORY_SLOT_MS } from '../../../core/workers/endpoint-history.ts';
import { LogHistogram } from '../../../core/workers/log-histogram.ts';
import { hourOf } from '../../../core/workers/endpoint-history-store.ts';

let dir: string;
let store: LowdbStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-history-retention-'));
  store = await LowdbStore.open({ dir, fsync: false });
});
afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

const HOUR = 3600_000;
const now = Math.floor(Date.UTC(2026, 10, 26, 12, 0, 5) / HISTORY_SLOT_MS) * HISTORY_SLOT_MS;

function history(writer: string): EndpointHistory {
  const idle = { idle: 0, running: 0, initializing: 0, throttled: 0, unhealthy: 0, total: 0 };
  return new EndpointHistory({
    endpointIds: async () => ['ep1'],
    queue: { counts: async () => ({ inQueue: 0, inProgress: 0 }), onFinal: () => () => undefined } as never,
    workers: { counts: async () => idle, onReady: () => () => undefined, requests: { depth: () => ({ inQueue: 0, inProgress: 0 }) } } as never,
    clock: () => now,
    store,
    writer,
  });
}

const job = (finishedAt: number): Job => ({ id: `j${finishedAt}`, endpointId: 'ep1', status: 'COMPLETED', finishedAt, startedAt: finishedAt - 50, executionTime: 50, delayTime: 5 }) as unknown as Job;

test('a day old is swept and never written; an hour old is written and another writer reads it', async () => {
  const empty = new LogHistogram().toStored();
  const old = now - 25 * HOUR;
  // a record another process left 25 hours ago
  await store.transact((tx) =>
    tx.put('endpointMetricSlots', { id: `ep1.${old}.gone`, endpointId: 'ep1', at: old, hour: hourOf(old), writer: 'gone', jobs: { COMPLETED: 4, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0 }, delay: empty, execution: empty, coldStart: empty, samples: [] }),
  );
  const h = history('w1');
  h.recordJob(job(old + 1000));
  h.recordJob(job(now - HOUR + 5000));
  await h.sample();
  const stored = await store.list('endpointMetricSlots', { endpointId: 'ep1' });
  // the job of an hour ago, and the sample taken now; the day-old job and record are gone
  expect(stored.map((r) => r.at).sort()).toEqual([now - HOUR, now]);
  expect(stored.every((r) => r.writer === 'w1')).toBe(true);
  // a second writer (a restart, a replica) reads the first one's slot of an hour ago
  const buckets = await history('w2').query('ep1', now - 2 * HOUR, now + HISTORY_SLOT_MS, HOUR);
  expect(buckets.map((b) => b.jobs.completed)).toEqual([0, 1, 0]);
  expect(buckets[1]!.executionMs).toMatchObject({ count: 1 });
  expect(buckets[2]!.queue).toEqual({ inQueue: 0, inProgress: 0, maxInQueue: 0 });
});
