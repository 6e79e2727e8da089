// The serverless metrics' writes to the store (core/workers/endpoint-history.ts) when a write is slow
// (a slow database, a sweep): the store is wrapped so that chosen transactions wait before they apply.
// A slot written twice keeps its newer record even when the older write is the slow one, and stop()
// returns only once everything recorded is in the store, even with the periodic sample's write in flight.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Job } from '../../../model/index.ts';
import { LowdbStore, type Store } from '../../../store/index.ts';
import { EndpointHistory } from '../../../core/workers/endpoint-history.ts';

let dir: string;
let store: LowdbStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-history-writes-'));
  store = await LowdbStore.open({ dir, fsync: false });
});
afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

const t = Date.now();

/** the store, whose transactions wait `delays.shift()` ms (none left: 0) before they apply; `started` resolves at each */
function slowStore(delays: number[]) {
  const pending: Promise<unknown>[] = [];
  let started: () => void = () => undefined;
  const slow = new Proxy(store, {
    get(target, prop) {
      if (prop === 'transact') {
        return (fn: never) => {
          const wait = delays.shift() ?? 0;
          started();
          const p = new Promise((r) => setTimeout(r, wait)).then(() => target.transact(fn));
          pending.push(p);
          return p;
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Store;
  return {
    slow,
    /** resolves at the next transaction's start */
    nextStart: () => new Promise<void>((r) => (started = r)),
    /** every transaction begun so far, ended */
    settled: () => Promise.allSettled(pending),
  };
}

function history(endpointId: string, s: Store, writer: string): EndpointHistory {
  const idle = { idle: 0, running: 0, initializing: 0, throttled: 0, unhealthy: 0, total: 0 };
  return new EndpointHistory({
    endpointIds: async () => [endpointId],
    queue: { counts: async () => ({ inQueue: 0, inProgress: 0 }), onFinal: () => () => undefined } as never,
    workers: { counts: async () => idle, onReady: () => () => undefined, requests: { depth: () => ({ inQueue: 0, inProgress: 0 }) } } as never,
    clock: () => t,
    sampleEveryMs: 60_000,
    store: s,
    writer,
  });
}

const completed = (endpointId: string, n: number): Job => ({ id: `job-${endpointId}-${n}`, endpointId, status: 'COMPLETED', finishedAt: t, executionTime: 5 }) as unknown as Job;

async function storedCompleted(endpointId: string, writer: string): Promise<number | undefined> {
  const records = (await store.list('endpointMetricSlots', { endpointId })).filter((r) => r.writer === writer);
  expect(records.length).toBeLessThanOrEqual(1);
  return records[0]?.jobs.COMPLETED;
}

test("a slot's older record, written slowly, does not commit after its newer one", async () => {
  const s = slowStore([400]); // the first write (the periodic sample's) is slow, the next is not
  const h = history('ep-order', s.slow, 'w-order');
  h.recordJob(completed('ep-order', 1));
  const first = s.nextStart();
  h.start();
  await first; // the sample's write of { COMPLETED: 1 } is under way
  h.recordJob(completed('ep-order', 2));
  await h.flush(); // { COMPLETED: 2 }
  await h.stop();
  await s.settled();
  expect(await storedCompleted('ep-order', 'w-order')).toBe(2);
});

test("stop() returns once what was recorded is in the store, with the periodic sample's write in flight", async () => {
  const s = slowStore([300]);
  const h = history('ep-stop', s.slow, 'w-stop');
  h.recordJob(completed('ep-stop', 1));
  h.recordJob(completed('ep-stop', 2));
  const first = s.nextStart();
  h.start();
  await first; // the sample's write holds both jobs; nothing is left to write
  await h.stop();
  // no waiting for the store here: what stop() promises is already durable
  expect(await storedCompleted('ep-stop', 'w-stop')).toBe(2);
  await s.settled();
});
