// Durations as operators write them: Go's time.ParseDuration grammar ("10m", "1h30m", "1.5h", "90s",
// "250ms") or a number of seconds (a JSON number, or a string of digits in an environment variable).
// Used by a drain's deadline (POST /v2/hosts/{id}/drain) and GPUFLEET_HOST_LOST_AFTER.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** one or more <decimal><unit> terms, nothing else: no sign, no spaces, at most 64 characters */
const GO_DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;
const SECONDS = /^\d{1,9}(?:\.\d{1,3})?$/;

/**
 * Milliseconds, or null when `value` is not a duration: a Go duration string, a string of seconds
 * ("300"), or a finite non-negative number of seconds.
 */
export function parseDuration(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : null;
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return null;
  if (SECONDS.test(value)) return Number(value) * 1000;
  if (!GO_DURATION.test(value)) return null;
  let ms = 0;
  for (const m of value.matchAll(TERM)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return Number.isFinite(ms) ? ms : null;
}
