// An endpoint's metrics over time from GET /v2/serverless/{id}/metrics?from&to&step (docs/serverless.md):
// workers by state, queue depth, delay / execution / cold start percentiles, as charts. Each point's
// numeric fields become series, grouped by their top-level field, so a field the route adds shows too.
import { useMemo, useState } from 'preact/hooks';
import { ApiError } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { Chart, type Series } from '../ui/chart.tsx';
import { useInterval, useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Loading } from '../ui/widgets.tsx';

const RANGES = [
  { id: '1h', label: 'Last hour', ms: 3600_000, step: 60 },
  { id: '6h', label: 'Last 6 hours', ms: 6 * 3600_000, step: 300 },
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3600_000, step: 900 },
];

type Point = Record<string, unknown>;

function flatten(v: unknown, path: string, out: Map<string, number>): void {
  if (typeof v === 'number') out.set(path, v);
  else if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) flatten(x, path ? `${path}.${k}` : k, out);
}

export function timeOf(p: Point): number | null {
  const t = p.time ?? p.t ?? p.timestamp ?? p.at ?? p.start;
  if (typeof t === 'number') return t > 1e12 ? t / 1000 : t;
  if (typeof t === 'string') return Date.parse(t) / 1000;
  return null;
}

/** the answer's points: the first array of objects in it */
function pointsOf(answer: unknown): Point[] {
  if (Array.isArray(answer)) return answer as Point[];
  if (answer && typeof answer === 'object') for (const v of Object.values(answer)) if (Array.isArray(v) && v.length && typeof v[0] === 'object') return v as Point[];
  return [];
}

export function groupSeries(points: Point[]): { times: number[]; groups: Map<string, Series[]> } {
  const rows = points.map((p) => ({ t: timeOf(p), values: (() => { const m = new Map<string, number>(); flatten(p, '', m); return m; })() })).filter((r) => r.t !== null);
  const times = rows.map((r) => r.t!);
  const names = new Set<string>();
  for (const r of rows) for (const k of r.values.keys()) if (!/^(time|t|timestamp|at|start)$/.test(k)) names.add(k);
  const groups = new Map<string, Series[]>();
  for (const name of names) {
    const group = name.includes('.') ? name.slice(0, name.indexOf('.')) : name;
    const list = groups.get(group) ?? [];
    list.push({ label: name.includes('.') ? name.slice(name.indexOf('.') + 1) : name, values: rows.map((r) => r.values.get(name) ?? null) });
    groups.set(group, list);
  }
  return { times, groups };
}

export function EndpointMetrics({ endpointId }: { endpointId: string }) {
  const api = useApi();
  const [range, setRange] = useState(RANGES[0]!);
  const m = useLoad(() => {
    const to = new Date();
    const from = new Date(to.getTime() - range.ms);
    return api.client.get<unknown>(`/v2/serverless/${encodeURIComponent(endpointId)}/metrics?from=${from.toISOString()}&to=${to.toISOString()}&step=${range.step}`);
  }, [endpointId, range.id]);
  useInterval(m.reload, 15_000);
  const data = useMemo(() => groupSeries(pointsOf(m.data)), [m.data]);
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
      {m.error instanceof ApiError && m.error.status === 404 && m.error.code === 'ROUTE_NOT_FOUND' ? (
        <p>This control plane does not serve endpoint metrics yet.</p>
      ) : (
        <ErrorAlert error={m.error} />
      )}
      {!m.data && !m.error ? <Loading what="metrics" /> : null}
      {m.data && data.times.length === 0 ? <p>No metrics in this range yet.</p> : null}
      {[...data.groups.entries()].map(([group, series]) => (
        <Chart title={group} times={data.times} series={series} />
      ))}
    </section>
  );
}
