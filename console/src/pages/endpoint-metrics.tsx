// An endpoint's metrics over time (GET /v2/serverless/{id}/metrics, docs/serverless.md "Metrics over
// time"): workers by state, the queue, jobs finished, and delay / execution / cold start p50, p90,
// p99, each a chart with its numbers as a table.
import { useMemo, useState } from 'preact/hooks';
import type { EndpointMetricsBucket } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { Chart, type Series } from '../ui/chart.tsx';
import { useInterval, useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Loading } from '../ui/widgets.tsx';

const RANGES = [
  { id: '1h', label: 'Last hour', ms: 3600_000, step: 60 },
  { id: '6h', label: 'Last 6 hours', ms: 6 * 3600_000, step: 300 },
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3600_000, step: 900 },
];

type B = EndpointMetricsBucket;

const CHARTS: { title: string; unit?: string; series: [string, (b: B) => number | null][] }[] = [
  {
    title: 'Workers by state',
    series: (['running', 'idle', 'initializing', 'throttled', 'unhealthy'] as const).map((k) => [k, (b: B) => b.workers?.[k] ?? null]),
  },
  {
    title: 'Queue',
    series: [
      ['in queue', (b) => b.queue?.inQueue ?? null],
      ['most in queue', (b) => b.queue?.maxInQueue ?? null],
      ['in progress', (b) => b.queue?.inProgress ?? null],
    ],
  },
  { title: 'Jobs finished', series: (['completed', 'failed', 'cancelled', 'timedOut'] as const).map((k) => [k, (b: B) => b.jobs[k]]) },
  ...(
    [
      ['Delay', 'delayMs'],
      ['Execution', 'executionMs'],
      ['Cold start', 'coldStartMs'],
    ] as const
  ).map(([title, key]) => ({
    title: `${title} (ms)`,
    unit: ' ms',
    series: (['p50', 'p90', 'p99'] as const).map((p): [string, (b: B) => number | null] => [p, (b: B) => b[key][p]]),
  })),
];

export function EndpointMetrics({ endpointId }: { endpointId: string }) {
  const api = useApi();
  const [range, setRange] = useState(RANGES[0]!);
  const m = useLoad(() => {
    const to = new Date();
    return api.endpoints.metrics(endpointId, { from: new Date(to.getTime() - range.ms), to, step: range.step });
  }, [endpointId, range.id]);
  useInterval(m.reload, 15_000);
  const charts = useMemo(() => {
    const buckets = m.data?.buckets ?? [];
    const times = buckets.map((b) => Date.parse(b.start) / 1000);
    return CHARTS.map((c) => ({ ...c, times, data: c.series.map(([label, f]): Series => ({ label, values: buckets.map(f) })) }));
  }, [m.data]);
  return (
    <section aria-label="Metrics">
      <label>
        Range{' '}
        <select value={range.id} onChange={(e) => setRange(RANGES.find((r) => r.id === e.currentTarget.value) ?? RANGES[0]!)}>
          {RANGES.map((r) => (
            <option value={r.id}>{r.label}</option>
          ))}
        </select>
      </label>
      <ErrorAlert error={m.error} />
      {!m.data && !m.error ? <Loading what="metrics" /> : null}
      {m.data ? charts.map((c) => <Chart title={c.title} times={c.times} series={c.data} unit={c.unit} />) : null}
    </section>
  );
}
