// GET /v2/serverless/{id}/metrics against a real control plane (docs/serverless.md, "Metrics over
// time"): jobs run by an in-process worker (the worker SDK over the real worker routes) show up as
// counts by final status and delay / execution percentiles in the bucket they happened in; queue depth
// and workers by state come from samples; a worker's first contact is a cold start; the window's
// parameters are validated; another account's endpoint is 404, no key 401, and a read key may read.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isWorker } from '../../../model/index.ts';
import { ApiClient, EndpointsApi } from '../../../client/index.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { startJobWorld, type JobWorld } from '../jobs/in-process-workers.ts';

let world: JobWorld;
beforeAll(async () => {
  world = await startJobWorld();
});
afterAll(async () => world?.close());

interface Bucket {
  start: string;
  workers: Record<string, number> | null;
  queue: { inQueue: number; inProgress: number; maxInQueue: number } | null;
  jobs: { completed: number; failed: number; cancelled: number; timedOut: number };
  delayMs: { count: number; p50: number | null; p90: number | null; p99: number | null };
  executionMs: { count: number; p50: number | null; p90: number | null; p99: number | null };
  coldStartMs: { count: number; p50: number | null; p90: number | null; p99: number | null };
}
interface Metrics {
  endpointId: string;
  from: string;
  to: string;
  step: number;
  buckets: Bucket[];
}

const metrics = async (id: string, query = '', key = world.user.key): Promise<Metrics> => {
  const res = await world.cp.api(`/v2/serverless/${id}/metrics${query}`, { key });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Metrics;
};

const sum = (m: Metrics, f: (b: Bucket) => number) => m.buckets.reduce((n, b) => n + f(b), 0);

describe('GET /v2/serverless/{id}/metrics', () => {
  test('jobs by final status, delay and execution time, in the buckets they happened in', async () => {
    const id = await world.newEndpoint();
    await world.startWorker(id);
    for (const input of [{ sleep_ms: 300 }, { sleep_ms: 300 }, { sleep_ms: 300 }, { fail: 'no' }]) {
      const res = await world.cp.api(`/v2/${id}/runsync`, { method: 'POST', key: world.user.key, json: { input } });
      expect(res.status).toBe(200);
    }
    const m = await metrics(id);
    // the default: the last hour in minutes
    expect(m.step).toBe(60);
    expect(m.buckets).toHaveLength(60);
    expect(Date.parse(m.to) - Date.parse(m.from)).toBe(3600_000);
    expect(sum(m, (b) => b.jobs.completed)).toBe(3);
    expect(sum(m, (b) => b.jobs.failed)).toBe(1);
    const last = m.buckets.filter((b) => b.executionMs.count > 0);
    expect(last.length).toBeGreaterThanOrEqual(1);
    const exec = last.at(-1)!.executionMs;
    expect(sum(m, (b) => b.executionMs.count)).toBe(4);
    // three of four ran ≥ 300 ms: the median and above are at least that (within the histogram's 4.4 %)
    expect(exec.p90!).toBeGreaterThanOrEqual(290);
    expect(exec.p99!).toBeLessThan(10_000);
    expect(sum(m, (b) => b.delayMs.count)).toBe(4);
    // a finer window: the same jobs, in 10-second buckets
    const fine = await metrics(id, `?from=${encodeURIComponent(new Date(Date.now() - 120_000).toISOString())}&step=10s`);
    expect(fine.step).toBe(10);
    expect(fine.buckets.length).toBeGreaterThanOrEqual(12);
    expect(fine.buckets.length).toBeLessThanOrEqual(13);
    expect(sum(fine, (b) => b.jobs.completed)).toBe(3);
  });

  test('queue depth and workers by state from samples, carried forward; a worker ready is a cold start', async () => {
    const id = await world.newEndpoint(undefined, { workersMax: 1, gpuTypeIds: ['NVIDIA H100 80GB HBM3'] });
    // no worker: the jobs wait
    for (let i = 0; i < 2; i++) expect((await world.cp.api(`/v2/${id}/run`, { method: 'POST', key: world.user.key, json: { input: {} } })).status).toBe(200);
    await world.cp.services.endpointHistory.sample();
    let m = await metrics(id);
    const end = m.buckets.at(-1)!;
    expect(end.queue).toEqual({ inQueue: 2, inProgress: 0, maxInQueue: 2 });
    expect(end.workers).toEqual({ idle: 0, running: 0, initializing: 0, throttled: 0, unhealthy: 0 });
    // before the endpoint existed nothing was sampled: null, not zero
    expect(m.buckets[0]!.queue).toBeNull();

    // a worker record of the endpoint, placed and running as the provisioner leaves it, then its first contact
    const ep = await world.cp.services.store.get('endpoints', id);
    await seedHosts(world.cp.services.store, [{ gpus: 8, ...(ep!.dataCenterIds?.[0] ? { dataCenterId: ep!.dataCenterIds[0] } : {}) }]);
    await world.cp.services.workers.create(ep!, 1);
    const pods = (await world.cp.services.store.list('pods', { endpointId: id })).filter(isWorker);
    expect(pods.length).toBe(1);
    const now = new Date().toISOString();
    await world.cp.services.store.transact(async (tx) => {
      const p = (await tx.get('pods', pods[0]!.id))!;
      tx.put('pods', { ...p, status: 'RUNNING', statusReason: null, startedAt: now, observed: { containerId: 'c-metrics', containerStartedAt: now, ports: [], gpus: [], cpuUtil: null, memoryUtil: null, observedAt: now } });
    });
    await world.cp.services.workers.seen(pods[0]!.id, { healthy: true, inProgress: [] });
    await world.cp.services.endpointHistory.sample();
    m = await metrics(id);
    const cold = m.buckets.at(-1)!.coldStartMs;
    expect(cold.count).toBe(1);
    expect(cold.p50!).toBeGreaterThanOrEqual(0);
    expect(cold.p50!).toBeLessThan(60_000);
    const w = m.buckets.at(-1)!.workers!;
    expect(w.idle! + w.running!).toBe(1);
  });

  test('the window: RFC 3339 or Unix seconds, aligned to 10 s, never past now; bad ones 422 naming the field', async () => {
    const id = await world.newEndpoint();
    const to = Math.floor(Date.now() / 10_000) * 10 - 600;
    const m = await metrics(id, `?from=${to - 3600}&to=${to}&step=5m`);
    expect(m.step).toBe(300);
    expect(m.buckets).toHaveLength(12);
    expect(Date.parse(m.buckets[0]!.start) % 10_000).toBe(0);
    const future = await metrics(id, `?to=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`);
    expect(Date.parse(future.to)).toBeLessThanOrEqual(Date.now() + 10_000);
    for (const [q, field] of [
      ['?step=1s', 'step'],
      ['?step=often', 'step'],
      ['?from=yesterday', 'from'],
      ['?to=2025-13-01', 'to'],
      [`?from=${to}&to=${to - 60}`, 'from'],
      ['?from=0&step=10s', 'step'],
      ['?bucket=1', 'bucket'],
      ['?step=60s&step=120s', 'step'],
    ] as const) {
      const res = await world.cp.api(`/v2/serverless/${id}/metrics${q}`, { key: world.user.key });
      expect(res.status, q).toBe(422);
      const p = (await res.json()) as { code: string; errors: string[] };
      expect(p.code).toBe('VALIDATION_FAILED');
      expect(p.errors.join(' '), q).toContain(`$.${field}`);
    }
    // the route's own parser answers (its schema documents the query, queryByHand), not a generic schema refusal
    const unknown = await world.cp.api(`/v2/serverless/${id}/metrics?bucket=1`, { key: world.user.key });
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/Unknown query parameter\(s\): bucket/);
  });

  test('client/: EndpointsApi.metrics takes a Date window and a step', async () => {
    const id = await world.newEndpoint();
    const api = new EndpointsApi(new ApiClient({ url: world.cp.url, apiKey: world.user.key }));
    const from = new Date(Date.now() - 300_000);
    const m = await api.metrics(id, { from, step: '30s' });
    expect(m.endpointId).toBe(id);
    expect(m.step).toBe(30);
    expect(m.buckets.length).toBeGreaterThanOrEqual(10);
    expect(m.buckets.length).toBeLessThanOrEqual(11);
    expect(Object.keys(m.buckets[0]!).sort()).toEqual(['coldStartMs', 'delayMs', 'executionMs', 'jobs', 'queue', 'start', 'workers']);
    await expect(api.metrics(id, { step: 1 })).rejects.toMatchObject({ status: 422 });
  });

  test('auth: no key 401; another account 404; a read key reads', async () => {
    const id = await world.newEndpoint();
    expect((await world.cp.api(`/v2/serverless/${id}/metrics`, { key: null })).status).toBe(401);
    const other = await world.cp.newAccount('read_write');
    expect((await world.cp.api(`/v2/serverless/${id}/metrics`, { key: other.key })).status).toBe(404);
    const { key: readKey } = await world.cp.services.keys.createKey({ accountId: world.user.accountId, name: 'reader', scope: 'read' });
    const m = await metrics(id, '', readKey);
    expect(m.endpointId).toBe(id);
  });
});
