// GET /metrics (issue 13): who may read it, that it is valid Prometheus text, and that its values
// are the fleet's known state. Through a listening server; hosts are store records (no provisioner),
// so every number below is fixed by what this test created.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { parsePrometheusText, sampleValue, samplesOf } from '../harness/prometheus-text.ts';
import type { PodRecord } from '../../model/records/pod.ts';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';
const H100 = 'NVIDIA H100 80GB HBM3';
const UNLIMITED = 'minute=100000000,hour=100000000,day=100000000';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane({ rateLimits: UNLIMITED, config: { metricsToken: TOKEN } });
  await seedHosts(cp.services.store, [
    { id: 'm-gpu-a', gpus: 8, dataCenterId: 'dc-a' },
    { id: 'm-gpu-b', gpus: 4, dataCenterId: 'dc-b' },
    { id: 'm-cpu', gpus: 0, dataCenterId: 'dc-a' },
  ]);
  // one host the provisioner would have marked unreachable
  await cp.services.store.transact(async (tx) => {
    const h = (await tx.get('hosts', 'm-cpu'))!;
    tx.put('hosts', { ...h, status: 'UNREACHABLE' });
  });
});
afterAll(async () => cp?.close());

const scrape = async (init: { key?: string | null; headers?: Record<string, string> } = {}) => {
  const res = await cp.api('/metrics', init);
  return { res, text: await res.text() };
};

describe('who may read /metrics', () => {
  test('an operator key and the metrics token are served; anonymous, tenant keys and a wrong token are not', async () => {
    const tenant = await cp.newAccount('admin');
    const operatorRead = await cp.services.keys.createKey({ accountId: (await cp.services.keys.authenticate(`Bearer ${ADMIN_KEY}`)).accountId, name: 'ro', scope: 'read' });
    expect((await scrape({ key: null })).res.status).toBe(401);
    expect((await scrape({ key: tenant.key })).res.status).toBe(403);
    expect((await scrape({ key: null, headers: { authorization: `Bearer ${TOKEN}x` } })).res.status).toBe(401);
    expect((await scrape({ key: null, headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } })).res.status).toBe(401);
    expect((await scrape({ key: null, headers: { authorization: TOKEN } })).res.status).toBe(401);
    for (const init of [{ key: ADMIN_KEY }, { key: operatorRead.key }, { key: null, headers: { authorization: `Bearer ${TOKEN}` } }]) {
      const { res, text } = await scrape(init);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(text).toContain('# TYPE gpufleet_pods gauge');
    }
  });

  test('the metrics token opens no other route', async () => {
    for (const p of ['/v2/pods', '/v2/hosts', '/v2/events', '/v2/keys']) {
      const res = await cp.api(p, { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status, p).toBe(401);
    }
  });
});

describe('the metric values', () => {
  test('the text parses as Prometheus exposition; pods, hosts and GPUs equal what the store holds', async () => {
    const tenant = await cp.newAccount('read_write');
    const make = async (count: number, dc: string) => {
      const res = await cp.api('/v2/pods', {
        key: tenant.key,
        method: 'POST',
        json: { name: `m-${count}-${dc}-${Math.random()}`, image: 'busybox:1.36', gpu: { id: H100, count }, dataCenterIds: [dc], disk: 5 },
      });
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).toBe(201);
      return body.id;
    };
    await make(3, 'dc-a');
    const stopped = await make(2, 'dc-a');
    await make(1, 'dc-b');
    expect((await cp.api(`/v2/pods/${stopped}/action`, { key: tenant.key, method: 'POST', json: { action: 'stop' } })).status).toBe(200);
    // a serverless worker is a pod record with endpointId: it holds GPUs but is not counted as a pod
    await cp.services.store.transact(async (tx) => {
      const pods = await tx.list('pods', { accountId: tenant.accountId });
      const held = new Set(pods.flatMap((p) => p.gpuUuids));
      const free = (await tx.get('hosts', 'm-gpu-b'))!.facts.gpus.find((g) => !held.has(g.uuid))!.uuid;
      const worker: PodRecord = { ...pods[0]!, id: 'm-worker', name: 'm-worker', status: 'RUNNING', endpointId: 'ep-m', hostId: 'm-gpu-b', allocated: true, gpuUuids: [free] };
      tx.put('pods', worker);
    });

    const families = parsePrometheusText((await scrape({ key: ADMIN_KEY })).text);
    expect(families.get('gpufleet_pods')?.type).toBe('gauge');
    expect(sampleValue(families, 'gpufleet_pods', { status: 'PROVISIONING' })).toBe(2);
    expect(sampleValue(families, 'gpufleet_pods', { status: 'EXITED' })).toBe(1);
    expect(sampleValue(families, 'gpufleet_pods', { status: 'RUNNING' })).toBe(0);
    expect(samplesOf(families, 'gpufleet_pods')).toHaveLength(6);
    expect(sampleValue(families, 'gpufleet_hosts', { state: 'READY' })).toBe(2);
    expect(sampleValue(families, 'gpufleet_hosts', { state: 'UNREACHABLE' })).toBe(1);
    expect(sampleValue(families, 'gpufleet_hosts', { state: 'DRAINING' })).toBe(0);
    // dc-a: 8 GPUs, the running 3-GPU pod holds 3 (the stopped one released its 2); dc-b: 4, the 1-GPU pod and the worker hold 2
    expect(sampleValue(families, 'gpufleet_gpus', { type: H100, datacenter: 'dc-a', state: 'allocated' })).toBe(3);
    expect(sampleValue(families, 'gpufleet_gpus', { type: H100, datacenter: 'dc-a', state: 'free' })).toBe(5);
    expect(sampleValue(families, 'gpufleet_gpus', { type: H100, datacenter: 'dc-b', state: 'allocated' })).toBe(2);
    expect(sampleValue(families, 'gpufleet_gpus', { type: H100, datacenter: 'dc-b', state: 'free' })).toBe(2);
    for (const name of ['gpufleet_reconcile_duration_seconds', 'gpufleet_ssh_command_duration_seconds', 'gpufleet_store_commit_duration_seconds', 'gpufleet_http_request_duration_seconds'])
      expect(families.get(name)?.type, name).toBe('histogram');
    expect(families.get('gpufleet_ssh_failures_total')?.type).toBe('counter');
    expect(families.get('gpufleet_gpu_utilization_ratio')?.type).toBe('gauge');
    expect(families.get('gpufleet_gpu_memory_utilization_ratio')?.type).toBe('gauge');
  });

  test('each writing transaction is one store commit observed', async () => {
    const count = async () => sampleValue(parsePrometheusText((await scrape({ key: ADMIN_KEY })).text), 'gpufleet_store_commit_duration_seconds_count');
    const before = await count();
    for (let i = 0; i < 3; i++) await cp.services.store.transact((tx) => tx.put('stackLocks', { id: `m-lock-${i}`, holder: 'x', acquiredAt: '2025-01-01T00:00:00Z', expiresAt: '2025-01-01T00:00:00Z' }));
    await cp.services.store.transact(async (tx) => void (await tx.get('pods', 'none'))); // reads only: no commit
    expect((await count()) - before).toBe(3);
  });
});

describe('HTTP request metrics', () => {
  test('are labelled with the matched route pattern; ids and unmatched targets never become labels', async () => {
    const tenant = await cp.newAccount('read');
    const secretId = `podid${Date.now()}`;
    expect((await cp.api(`/v2/pods/${secretId}`, { key: tenant.key })).status).toBe(404);
    expect((await cp.api(`/v2/pods/${secretId}`, { key: tenant.key })).status).toBe(404);
    expect((await cp.api(`/v2/no-such-route/${secretId}`, { key: tenant.key })).status).toBe(404);
    expect((await cp.api(`/v2/pods/${secretId}/logs?tail=x`, { key: null })).status).toBe(401);
    const text = (await scrape({ key: ADMIN_KEY })).text;
    expect(text).not.toContain(secretId);
    const families = parsePrometheusText(text);
    expect(sampleValue(families, 'gpufleet_http_requests_total', { method: 'GET', route: '/v2/pods/:id', status: '404' })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(families, 'gpufleet_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'gpufleet_http_requests_total', { method: 'GET', route: '/v2/pods/:id/logs', status: '401' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'gpufleet_http_request_duration_seconds_count', { method: 'GET', route: '/v2/pods/:id', status: '404' })).toBeGreaterThanOrEqual(2);
    const routes = new Set(samplesOf(families, 'gpufleet_http_requests_total').map((s) => s.labels.route));
    for (const r of routes) expect(r === 'unmatched' || r!.startsWith('/'), r).toBe(true);
  });
});
