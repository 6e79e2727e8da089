// GET /v2/hosts/{id}/metrics (docs/gpu-metrics.md) against the real GPU watcher: a real sshd test host
// whose fixture nvidia-smi answers what the test writes (testing/gpu-fixtures.ts setGpuField), polled
// every second over the watcher's one SSH session. The values the fixture prints change and the route's
// last poll and buckets follow; `[N/A]` is null, never 0; the Prometheus gauges show the last poll
// (and no series for a value the driver did not give); a bad window is 422 naming the parameter; an
// unknown host 404; a user that is not an operator 403. The client's HostsApi reads the same answer.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient, HostsApi, type HostMetrics } from '../../client/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { parsePrometheusText, samplesOf } from '../harness/prometheus-text.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';

const MIB = 1024 * 1024;
let cp: TestControlPlane;
let host: TestHost;
let hostId = '';

const metrics = async (query = ''): Promise<HostMetrics> => {
  const res = await cp.api(`/v2/hosts/${hostId}/metrics${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as HostMetrics;
};
const currentOf = async (index: number) => (await metrics('?step=10s&from=' + Math.floor(Date.now() / 1000 - 120))).gpus.find((g) => g.index === index)!.current;

beforeAll(async () => {
  host = await startTestHost({ name: `gpumetrics-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3] });
  await host.gpu!.setGpuField(0, 'utilization.gpu', 37);
  await host.gpu!.setGpuField(0, 'memory.used', 20480);
  // GPU 1 gives no utilisation and no power draw (as a MIG or vGPU may answer)
  await host.gpu!.setGpuField(1, 'utilization.gpu', '[N/A]');
  await host.gpu!.setGpuField(1, 'power.draw', '[N/A]');
  // nvidia-smi's limit raised: a slow fixture on a loaded machine is not what this file tests
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 500, config: { gpuPollSeconds: 1, gpuSmiTimeoutSeconds: 30 } });
  hostId = await enrolTestHost(cp, host);
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
});

describe('GET /v2/hosts/{id}/metrics', () => {
  test('each GPU with its last poll, which follows what nvidia-smi prints', async () => {
    await waitFor('the first poll with 37 %', async () => (await currentOf(0))?.utilization === 0.37, 30_000, 200);
    const m = await metrics();
    expect(m).toMatchObject({ hostId, step: 60, sampling: true });
    expect(m.gpus.map((g) => [g.index, g.name])).toEqual([
      [0, 'NVIDIA H100 80GB HBM3'],
      [1, 'NVIDIA H100 80GB HBM3'],
    ]);
    expect(m.gpus[0]!.current).toMatchObject({ utilization: 0.37, memoryUsedBytes: 20480 * MIB, memoryTotalBytes: 81559 * MIB, temperatureC: 33, powerWatts: 71.02 });
    expect(m.gpus[1]!.current).toMatchObject({ memoryUsedBytes: 1 * MIB });
    expect(Date.now() - Date.parse(m.gpus[0]!.current!.at)).toBeLessThan(30_000);
    // the default window: the last hour in minutes, the newest bucket holding the polls
    expect(m.gpus[0]!.buckets).toHaveLength(60);
    expect(m.gpus[0]!.buckets.at(-1)!.samples).toBeGreaterThan(0);

    await host.gpu!.setGpuField(0, 'utilization.gpu', 91);
    await host.gpu!.setGpuField(0, 'memory.used', 61440);
    await waitFor('the next poll with 91 %', async () => (await currentOf(0))?.utilization === 0.91, 30_000, 200);
    expect((await currentOf(0))?.memoryUsedBytes).toBe(61440 * MIB);
    // the buckets of the last two minutes saw both values
    const recent = (await metrics(`?from=${Math.floor(Date.now() / 1000) - 120}&step=120s`)).gpus[0]!.buckets;
    const seen = recent.filter((b) => b.utilization !== null);
    expect(Math.max(...seen.map((b) => b.utilization!.max))).toBe(0.91);
    expect(Math.min(...seen.map((b) => b.utilization!.mean))).toBeLessThan(0.91);
    expect(seen.at(-1)!.utilization!.last).toBe(0.91);
  });

  test('[N/A] is no value (null), never 0; the gauges show the last poll and leave out what the driver did not give', async () => {
    const c = await currentOf(1);
    expect(c).toMatchObject({ utilization: null, powerWatts: null, memoryUsedBytes: 1 * MIB, temperatureC: 33 });
    const polled = (await metrics('?step=10s')).gpus[1]!.buckets.filter((b) => b.samples > 0);
    expect(polled.length).toBeGreaterThan(0);
    for (const b of polled) expect(b).toMatchObject({ utilization: null, powerWatts: null, memoryUsedBytes: { last: 1 * MIB }, temperatureC: { last: 33 } });

    const families = parsePrometheusText(await (await cp.api('/metrics')).text());
    const uuids = (await metrics()).gpus.map((g) => g.uuid);
    expect(samplesOf(families, 'gpufleet_gpu_utilization_ratio', { host: hostId })).toEqual([{ name: 'gpufleet_gpu_utilization_ratio', labels: { host: hostId, gpu: '0', uuid: uuids[0]! }, value: 0.91 }]);
    expect(samplesOf(families, 'gpufleet_gpu_memory_used_bytes', { host: hostId }).map((s) => [s.labels.gpu, s.value])).toEqual([
      ['0', 61440 * MIB],
      ['1', 1 * MIB],
    ]);
    expect(families.get('gpufleet_gpu_utilization_ratio')?.type).toBe('gauge');
    // beside the health gauge
    expect(samplesOf(families, 'gpufleet_gpu_health', { host: hostId })).toHaveLength(2);
  });

  test('a bad window is 422 VALIDATION_FAILED naming the parameter, like the serverless metrics', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const [query, field] of [
      ['?step=5s', '$.step'],
      ['?step=fast', '$.step'],
      ['?from=yesterday', '$.from'],
      ['?to=2026-13-45', '$.to'],
      [`?from=${now + 3600}`, '$.from'],
      [`?from=${now - 7200}&to=${now - 3600 * 3}`, '$.from'],
      [`?from=${now - 86400}&step=10s`, '$.step'],
      ['?step=10s&step=20s', '$.step'],
      ['?window=1h', '$.window'],
    ] as const) {
      const res = await cp.api(`/v2/hosts/${hostId}/metrics${query}`);
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const p = (await res.json()) as { code: string; errors: string[] };
      expect(p.code, query).toBe('VALIDATION_FAILED');
      expect(p.errors.join(' '), query).toContain(field);
    }
  });

  test('an unknown host is 404; an account that is not an operator is refused; the client reads the same answer', async () => {
    expect((await cp.api('/v2/hosts/no-such-host/metrics')).status).toBe(404);
    const user = await cp.newAccount('read_write');
    const res = await cp.api(`/v2/hosts/${hostId}/metrics`, { key: user.key });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('FORBIDDEN');
    const api = new HostsApi(new ApiClient({ url: cp.url, apiKey: cp.adminKey }));
    const m = await api.metrics(hostId, { from: new Date(Date.now() - 300_000), step: '1m' });
    expect(m.step).toBe(60);
    expect(m.gpus).toHaveLength(2);
    expect(m.gpus[0]!.current?.utilization).toBe(0.91);
  });
});
