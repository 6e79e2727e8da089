// GET /v2/serverless/{id}/metrics outlives the process (docs/serverless.md, "Metrics over time"):
// each control plane writes its 10-second slots to the store (collection endpointMetricSlots, one
// record per endpoint, slot and writer) and a query adds every other writer's. A control plane
// restarted on the same data (the embedded store's folder, or its PostgreSQL database under
// GPUFLEET_TEST_STORE=postgres) answers the jobs and samples the one before it recorded; two replicas
// on one PostgreSQL database answer one history, each counting what went through the other.
// Jobs here end CANCELLED (cancelled while queued: no worker is needed to make a final status).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { replicasOnOneDatabase } from '../../harness/replicas-on-one-database.ts';

interface Bucket {
  queue: { inQueue: number; inProgress: number; maxInQueue: number } | null;
  jobs: { completed: number; failed: number; cancelled: number; timedOut: number };
}

const toClose: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of toClose.reverse()) await c().catch(() => undefined);
});

async function metrics(cp: TestControlPlane, id: string, key: string): Promise<Bucket[]> {
  const res = await cp.api(`/v2/serverless/${id}/metrics?step=10m`, { key });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { buckets: Bucket[] }).buckets;
}

const cancelled = (b: Bucket[]) => b.reduce((n, x) => n + x.jobs.cancelled, 0);

/** an endpoint with no host to run on: its jobs wait in the queue */
async function newEndpoint(cp: TestControlPlane, key: string): Promise<string> {
  const tpl = (await (await cp.api('/v2/templates', { key, method: 'POST', json: { name: `t-${Math.random().toString(36).slice(2, 8)}`, image: 'img', serverless: true } })).json()) as { id: string };
  const res = await cp.api('/v1/endpoints', { key, method: 'POST', json: { templateId: tpl.id, name: 'stored-metrics', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1 } });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** a job sent through `cp` and cancelled there while it waits */
async function cancelledJob(cp: TestControlPlane, id: string, key: string): Promise<void> {
  const job = (await (await cp.api(`/v2/${id}/run`, { key, method: 'POST', json: { input: {} } })).json()) as { id: string };
  const res = await cp.api(`/v2/${id}/cancel/${job.id}`, { key, method: 'POST' });
  expect(res.status, await res.clone().text()).toBe(200);
}

test('a control plane restarted on the same store answers the history the one before it recorded, and adds its own', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-metrics-stored-'));
  toClose.push(() => rm(dataDir, { recursive: true, force: true }));
  const first = await startTestControlPlane({ dataDir });
  // closed in the test, and by afterAll where an expect failed before that (closed once either way)
  let firstClosed: Promise<void> | undefined;
  const closeFirst = () => (firstClosed ??= first.close());
  toClose.push(closeFirst);
  const user = await first.newAccount('read_write', 10);
  const id = await newEndpoint(first, user.key);
  await cancelledJob(first, id, user.key);
  await cancelledJob(first, id, user.key);
  // one job left waiting: the queue's sample is 1
  await first.api(`/v2/${id}/run`, { key: user.key, method: 'POST', json: { input: {} } });
  await first.services.endpointHistory.sample();
  const before = await metrics(first, id, user.key);
  expect(cancelled(before)).toBe(2);
  expect(before.at(-1)!.queue).toMatchObject({ inQueue: 1 });
  await closeFirst();

  const second = await startTestControlPlane({ dataDir });
  toClose.push(() => second.close());
  // nothing sampled or counted by this process yet: all of it is the first one's, read from the store
  const after = await metrics(second, id, user.key);
  expect(after.map((b) => b.jobs)).toEqual(before.map((b) => b.jobs));
  expect(after.at(-1)!.queue).toMatchObject({ inQueue: 1 });
  expect(after.findIndex((b) => b.queue !== null)).toBe(before.findIndex((b) => b.queue !== null));
  // its own jobs count beside them, at once (its memory) and once written (what another process reads)
  await cancelledJob(second, id, user.key);
  expect(cancelled(await metrics(second, id, user.key))).toBe(3);
  await second.services.endpointHistory.sample();
  const writers = new Set((await second.services.store.list('endpointMetricSlots', { endpointId: id })).map((r) => r.writer));
  expect(writers.size).toBe(2);
  // a deleted endpoint's slots go, every writer's
  expect((await second.api(`/v1/endpoints/${id}`, { key: user.key, method: 'DELETE' })).status).toBeLessThan(300);
  await second.services.endpointHistory.sample();
  await expect.poll(async () => (await second.services.store.list('endpointMetricSlots', { endpointId: id })).length, { timeout: 10_000 }).toBe(0);
}, 120_000);

describe('two replicas on one PostgreSQL database', () => {
  let cluster: TestPostgres;
  let cps: TestControlPlane[] = [];

  test('answer one history: each counts the jobs that went through the other once it has written them', async () => {
    cluster = await startPostgres();
    toClose.push(() => cluster.stop());
    cps = await replicasOnOneDatabase(cluster, 2, { secretKey: Buffer.alloc(32, 9) });
    toClose.push(() => Promise.all(cps.map((cp) => cp.close())));
    const [a, b] = cps as [TestControlPlane, TestControlPlane];
    const user = await a.newAccount('read_write', 10);
    const id = await newEndpoint(a, user.key);
    await cancelledJob(a, id, user.key);
    await cancelledJob(b, id, user.key);
    await cancelledJob(b, id, user.key);
    // before the replicas write (every 10 s), each sees its own
    expect(cancelled(await metrics(a, id, user.key))).toBe(1);
    await Promise.all([a.services.endpointHistory.sample(), b.services.endpointHistory.sample()]);
    for (const cp of [a, b]) {
      const buckets = await metrics(cp, id, user.key);
      expect(cancelled(buckets)).toBe(3);
      expect(buckets.at(-1)!.queue).toMatchObject({ inQueue: 0, inProgress: 0 });
    }
  }, 180_000);
});
