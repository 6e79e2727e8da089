// Each GPU's utilisation and memory on the Fleet page, live (GET /v2/hosts/{id}/metrics, docs/gpu-metrics.md):
// the last 15 minutes in 10-second steps, read again every 5 seconds (the GPU watcher polls every
// GPUFLEET_GPU_POLL_SECONDS, 5 by default). Per GPU: its values now as text (in the GPU table and
// beside the charts, for screen readers) and two uPlot charts, utilisation and memory used.
import { useMemo } from 'preact/hooks';
import type { GpuUsageNow, HostMetrics } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { Chart, type Series } from '../ui/chart.tsx';
import { useInterval, useLoad, type Loaded } from '../ui/hooks.ts';
import { ErrorAlert } from '../ui/widgets.tsx';

const WINDOW_MS = 15 * 60_000;
const REFRESH_MS = 5_000;
const GIB = 1024 ** 3;

/** `enabled` false (a host with no GPUs): no reads at all */
export function useHostMetrics(hostId: string, enabled = true): Loaded<HostMetrics> {
  const api = useApi();
  const m = useLoad(() => api.hosts.metrics(hostId, { from: new Date(Date.now() - WINDOW_MS), step: '10s' }), [hostId], enabled);
  // a read slower than the period is left to finish (a reload would drop it, and the charts would never fill)
  useInterval(() => {
    if (enabled && !m.loading) m.reload();
  }, REFRESH_MS);
  return m;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
export const percent = (ratio: number | null | undefined) => (ratio === null || ratio === undefined ? 'no value' : `${Math.round(ratio * 100)} %`);
const gibNumber = (bytes: number) => round1(bytes / GIB).toFixed(1);
const gib = (bytes: number) => `${gibNumber(bytes)} GiB`;

/** "60.0 of 79.6 GiB" */
export function memoryText(c: GpuUsageNow | null | undefined): string {
  if (!c || c.memoryUsedBytes === null) return 'no value';
  return c.memoryTotalBytes === null ? gib(c.memoryUsedBytes) : `${gibNumber(c.memoryUsedBytes)} of ${gib(c.memoryTotalBytes)}`;
}

function nowText(c: GpuUsageNow | null): string {
  if (!c) return 'No poll of this GPU yet.';
  const parts = [`utilisation ${percent(c.utilization)}`, `memory ${memoryText(c)}`];
  if (c.temperatureC !== null) parts.push(`${c.temperatureC} °C`);
  if (c.powerWatts !== null) parts.push(`${Math.round(c.powerWatts)} W`);
  return `Now: ${parts.join(', ')} (polled ${new Date(c.at).toLocaleTimeString()}).`;
}

export function GpuUsageCharts({ address, metrics }: { address: string; metrics: Loaded<HostMetrics> }) {
  const m = metrics.data;
  const charts = useMemo(
    () =>
      (m?.gpus ?? []).map((g) => {
        const times = g.buckets.map((b) => Date.parse(b.start) / 1000);
        const util: Series[] = [
          { label: 'mean %', values: g.buckets.map((b) => (b.utilization ? round1(b.utilization.mean * 100) : null)) },
          { label: 'max %', values: g.buckets.map((b) => (b.utilization ? round1(b.utilization.max * 100) : null)) },
        ];
        const mem: Series[] = [{ label: 'used GiB', values: g.buckets.map((b) => (b.memoryUsedBytes ? round1(b.memoryUsedBytes.last / GIB) : null)) }];
        const total = g.current?.memoryTotalBytes ?? g.buckets.findLast((b) => b.memoryTotalBytes)?.memoryTotalBytes?.last ?? null;
        return { g, times, util, mem, memRange: total ? ([0, round1(total / GIB)] as [number, number]) : undefined };
      }),
    [m],
  );
  return (
    <section class="gpu-usage" aria-label={`Utilisation and memory of the GPUs of ${address}`}>
      <ErrorAlert error={metrics.error} />
      {m && !m.sampling ? <p class="muted">This control plane does not poll this host now (another replica holds it); the charts show what it polled before.</p> : null}
      {charts.map(({ g, times, util, mem, memRange }) => (
        <section class="gpu-usage-gpu" aria-label={`GPU ${g.index} of ${address}: utilisation and memory`}>
          <h3>
            GPU {g.index} · {g.name}
          </h3>
          <p class="gpu-now">{nowText(g.current)}</p>
          <div class="chart-pair">
            <Chart title={`GPU ${g.index} utilisation (%)`} times={times} series={util} unit=" %" height={160} range={[0, 100]} />
            <Chart title={`GPU ${g.index} memory used (GiB)`} times={times} series={mem} unit=" GiB" height={160} range={memRange} />
          </div>
        </section>
      ))}
    </section>
  );
}
