// The window of the metrics-over-time routes, ?from&to&step (GET /v2/serverless/{id}/metrics,
// docs/serverless.md "Metrics over time"; GET /v2/hosts/{id}/metrics, docs/gpu-metrics.md): `from` and `to` are RFC 3339 times or Unix seconds, `step` a duration ("60s", "5m", or
// seconds); by default the last hour in minutes. All three are aligned to the 10-second slots, `to`
// is never past now, and a window holds at most MAX_BUCKETS buckets.
import { GpufleetError, parseDuration } from '../../model/index.ts';
import { HISTORY_SLOT_MS } from './slot-history.ts';

export const MAX_BUCKETS = 1440;
export const DEFAULT_WINDOW_MS = 3600_000;
export const DEFAULT_STEP_MS = 60_000;

export interface MetricsWindow {
  from: number;
  to: number;
  step: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const UNIX_SECONDS = /^\d{1,12}(\.\d{1,3})?$/;

function invalid(field: string, why: string): GpufleetError {
  return new GpufleetError('VALIDATION_FAILED', `${field}: ${why}`, { errors: [`$.${field}: ${why}`] });
}

function time(field: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalid(field, 'give it once');
  const ms = RFC3339.test(v) ? Date.parse(v) : UNIX_SECONDS.test(v) ? Number(v) * 1000 : NaN;
  if (!Number.isFinite(ms)) throw invalid(field, 'must be an RFC 3339 time (2025-01-31T12:00:00Z) or Unix seconds');
  return ms;
}

export function parseMetricsWindow(query: Record<string, unknown>, now: number): MetricsWindow {
  const unknown = Object.keys(query).filter((k) => k !== 'from' && k !== 'to' && k !== 'step');
  if (unknown.length)
    throw new GpufleetError('VALIDATION_FAILED', `Unknown query parameter(s): ${unknown.join(', ')}`, { errors: unknown.map((k) => `$.${k}: unknown query parameter`) });
  let step = DEFAULT_STEP_MS;
  if (query.step !== undefined) {
    const ms = typeof query.step === 'string' ? parseDuration(query.step) : null;
    if (ms === null || ms < HISTORY_SLOT_MS) throw invalid('step', 'must be a duration of at least 10s (60s, 5m, 1h, or seconds)');
    step = Math.ceil(ms / HISTORY_SLOT_MS) * HISTORY_SLOT_MS;
  }
  const lastSlotEnd = Math.floor(now / HISTORY_SLOT_MS) * HISTORY_SLOT_MS + HISTORY_SLOT_MS;
  const askedTo = time('to', query.to);
  const to = Math.min(lastSlotEnd, Math.ceil((askedTo ?? now) / HISTORY_SLOT_MS) * HISTORY_SLOT_MS);
  const askedFrom = time('from', query.from);
  const from = Math.floor((askedFrom ?? to - DEFAULT_WINDOW_MS) / HISTORY_SLOT_MS) * HISTORY_SLOT_MS;
  if (!(from < to)) throw invalid('from', 'must be before to (and before now)');
  if (Math.ceil((to - from) / step) > MAX_BUCKETS) throw invalid('step', `the window holds more than ${MAX_BUCKETS} steps: take a larger step or a shorter window`);
  return { from, to, step };
}

/** The window as the routes answer it: `from` and `to` in RFC 3339, `step` in seconds. */
export function windowView(w: MetricsWindow): { from: string; to: string; step: number } {
  return { from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString(), step: w.step / 1000 };
}
