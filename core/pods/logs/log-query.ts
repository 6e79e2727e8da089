// GET /v2/pods/{id}/logs parameters (runpod-compat.md, "REST v2 … Pods"; docs/pods.md, "Logs"):
// `tail` (default 100, at most 5000; 0 = live only), `since` (RFC 3339), `source` (container |
// system; both when omitted), `follow` (default true; false: what is there, then the end, as
// `docker logs` without --follow) and the Last-Event-ID header, which wins over `since` and `tail`.
// Nothing of them reaches a host unchecked: `since` must be an RFC 3339 time, `tail` an integer.
import { GpufleetError } from '../../../model/index.ts';

export const LOG_SOURCES = ['container', 'system'] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

export const LOG_TAIL_DEFAULT = 100;
export const LOG_TAIL_MAX = 5000;

/** An entry's position: its timestamp, and which of the entries with that same timestamp it is (1-based). */
export interface LogCursor {
  ts: string;
  nanos: bigint;
  nth: number;
}

export interface PodLogQuery {
  sources: readonly LogSource[];
  /** entries before the live ones; ignored when `since` or `after` is set */
  tail: number;
  since: string | null;
  /** from Last-Event-ID: only entries after it */
  after: LogCursor | null;
  /** false: the entries there are now, then the end (no live ones) */
  follow: boolean;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC 3339 time (docker prints nanoseconds; Date keeps milliseconds). */
export function rfc3339Nanos(ts: string): bigint | null {
  const m = RFC3339.exec(ts);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return null;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** The SSE id of an entry: its timestamp, with `#n` for the n-th entry (n ≥ 2) of that same timestamp. */
export function formatCursor(ts: string, nth: number): string {
  return nth <= 1 ? ts : `${ts}#${nth}`;
}

export function parseCursor(id: string): LogCursor | null {
  const m = /^([^#\s]+)(?:#(\d{1,9}))?$/.exec(id);
  const nanos = m ? rfc3339Nanos(m[1]!) : null;
  if (!m || nanos === null) return null;
  return { ts: m[1]!, nanos, nth: m[2] ? Number(m[2]) : 1 };
}

export function parsePodLogQuery(q: Record<string, unknown>, lastEventId: string | string[] | undefined): PodLogQuery {
  const errors: string[] = [];
  const one = (k: string): string | undefined => {
    const v = q[k];
    if (v === undefined || typeof v === 'string') return v;
    errors.push(`$.${k}: must be given once`);
    return undefined;
  };
  let tail = LOG_TAIL_DEFAULT;
  const t = one('tail');
  if (t !== undefined) {
    if (/^\d{1,4}$/.test(t) && Number(t) <= LOG_TAIL_MAX) tail = Number(t);
    else errors.push(`$.tail: must be an integer from 0 to ${LOG_TAIL_MAX}`);
  }
  const since = one('since') ?? null;
  if (since !== null && rfc3339Nanos(since) === null) errors.push('$.since: must be an RFC 3339 time, e.g. 2025-01-31T12:00:00Z');
  let sources: readonly LogSource[] = LOG_SOURCES;
  const s = one('source');
  if (s !== undefined) {
    if ((LOG_SOURCES as readonly string[]).includes(s)) sources = [s as LogSource];
    else errors.push(`$.source: must be one of ${LOG_SOURCES.join(', ')}`);
  }
  let follow = true;
  const f = one('follow');
  if (f !== undefined) {
    if (f === 'true' || f === 'false') follow = f === 'true';
    else errors.push('$.follow: must be true or false');
  }
  for (const k of Object.keys(q)) if (!['tail', 'since', 'source', 'follow'].includes(k)) errors.push(`$.${k}: unknown query parameter`);
  let after: LogCursor | null = null;
  if (lastEventId !== undefined) {
    after = typeof lastEventId === 'string' ? parseCursor(lastEventId.trim()) : null;
    if (!after) errors.push('Last-Event-ID: must be an id this stream sent (an RFC 3339 time, optionally #n)');
  }
  if (errors.length) throw new GpufleetError('VALIDATION_FAILED', `Invalid log request: ${errors.join('; ')}`, { errors });
  return { sources, tail, since, after, follow };
}
