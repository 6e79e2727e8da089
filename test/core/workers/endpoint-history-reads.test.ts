// What a metrics query reads from the store (core/workers/endpoint-history-store.ts), counted in
// records (StoredSlots.recordsRead), not timed: one writer samples an endpoint every 10 s for 3 hours
// with a queue depth that changes at every sample (one stored record per slot, 1,080 in all); a query
// of its last 30 minutes stops the look-back for a carried value at its own last sample before the
// window instead of walking back through all its own records; a second writer's sample newer than that
// is still carried into the window.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LowdbStore } from '../../../store/index.ts';
import { EndpointHistory, HISTORY_RETENTION_MS, HISTORY_SLOT_MS } from '../../../core/workers/endpoint-history.ts';

let dir: string;
let store: LowdbStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-history-reads-'));
  store = await LowdbStore.open({ dir, fsync: false });
});
afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

const HOUR = 3600_000;
const start = Math.floor(Date.UTC(2026, 10, 26, 9, 0, 0) / HOUR) * HOUR + 20 * 60_000;
let t = start;

function history(writer: string, depth: () => number): EndpointHistory {
  const idle = { idle: 0, running: 0, initializing: 0, throttled: 0, unhealthy: 0, total: 0 };
  return new EndpointHistory({
    endpointIds: async () => ['ep1'],
    queue: { counts: async () => ({ inQueue: depth(), inProgress: 0 }), onFinal: () => () => undefined } as never,
    workers: { counts: async () => idle, onReady: () => () => undefined, requests: { depth: () => ({ inQueue: 0, inProgress: 0 }) } } as never,
    clock: () => t,
    store,
    writer,
  });
}

test('a query of the last 30 minutes reads the window and the hour of its own last sample before it, not 3 hours of its own records', async () => {
  const w1 = history('w1', () => (t / HISTORY_SLOT_MS) % 1000);
  for (let i = 0; i < 3 * 360; i++, t += HISTORY_SLOT_MS) await w1.sample();
  const now = t;
  const from = now - 30 * 60_000;
  expect((await store.list('endpointMetricSlots', { endpointId: 'ep1' })).length).toBe(1080);

  // before: the look-back with no bound walks every hour back as far as retention, reading each hour's records
  const stored = w1.stored!;
  stored.recordsRead = 0;
  expect(await stored.carried('ep1', from, now - HISTORY_RETENTION_MS)).toBeNull();
  const unbounded = stored.recordsRead;
  expect(unbounded).toBeGreaterThanOrEqual(720);

  // after: the query bounds it by its own last sample before `from`
  stored.recordsRead = 0;
  const buckets = await w1.query('ep1', from, now, 10 * 60_000);
  const bounded = stored.recordsRead;
  console.log(`records read: carried look-back unbounded ${unbounded}; whole query (window + look-back) ${bounded}`);
  // the window's hours (at most 2) plus the one hour of the carried look-back
  expect(bounded).toBeLessThanOrEqual(3 * 360);
  expect(bounded).toBeLessThan(unbounded + 2 * 360);
  const lookBack = bounded - (await (async () => {
    stored.recordsRead = 0;
    await stored.others('ep1', from, now);
    return stored.recordsRead;
  })());
  expect(lookBack).toBeLessThanOrEqual(360);
  expect(buckets[0]!.queue).not.toBeNull();

  // a second writer's sample after w1's last one before the window is still the value carried in
  const w2 = history('w2', () => 4242);
  t = from - HISTORY_SLOT_MS / 2;
  await w2.sample();
  t = now;
  const withOther = await w1.query('ep1', from, now, 10 * 60_000);
  expect(withOther[0]!.queue!.maxInQueue).toBeGreaterThanOrEqual(4242);
});

test("a load balancer's requests are each replica's own: two writers' last values are added, not the last writer's taken", async () => {
  const idle = { idle: 0, running: 1, initializing: 0, throttled: 0, unhealthy: 0, total: 1 };
  const replica = (writer: string, depth: { inQueue: number; inProgress: number }) =>
    new EndpointHistory({
      endpointIds: async () => ['lb1'],
      queue: { counts: async () => ({ inQueue: 0, inProgress: 0 }), onFinal: () => () => undefined } as never,
      workers: { counts: async () => idle, onReady: () => () => undefined, requests: { depth: () => depth } } as never,
      clock: () => t,
      store,
      writer,
    });
  const base = t + HOUR;
  const a = replica('lb-a', { inQueue: 3, inProgress: 1 });
  const b = replica('lb-b', { inQueue: 5, inProgress: 2 });
  t = base;
  await a.sample();
  t = base + HISTORY_SLOT_MS;
  await b.sample();
  t = base + 2 * HISTORY_SLOT_MS;
  const stored = (await store.list('endpointMetricSlots', { endpointId: 'lb1' })).flatMap((r) => r.samples);
  expect(stored.map((s) => s.requests).sort((x, y) => x!.inQueue - y!.inQueue)).toEqual([{ inQueue: 3, inProgress: 1 }, { inQueue: 5, inProgress: 2 }]);
  expect(stored.every((s) => s.inQueue === 0)).toBe(true); // the job queue's own depth, without the requests
  for (const h of [a, b]) {
    const [bucket] = await h.query('lb1', base, base + 3 * HISTORY_SLOT_MS, 3 * HISTORY_SLOT_MS);
    expect(bucket!.queue).toEqual({ inQueue: 8, inProgress: 3, maxInQueue: 8 });
  }
  // one replica's requests drain: the sum follows, the other's stays
  const a0 = replica('lb-a', { inQueue: 0, inProgress: 0 });
  t = base + 2 * HISTORY_SLOT_MS;
  await a0.sample();
  t = base + 3 * HISTORY_SLOT_MS;
  const [later] = await b.query('lb1', base + 2 * HISTORY_SLOT_MS, base + 3 * HISTORY_SLOT_MS, HISTORY_SLOT_MS);
  expect(later!.queue).toEqual({ inQueue: 5, inProgress: 2, maxInQueue: 5 });
});
