// GPUFLEET_METRICS_TOKEN (docs/metrics.md): a Prometheus scraper's bearer token for GET /metrics.
// Compared in constant time: both sides are hashed first, so neither the length nor a matching
// prefix shows in the time the comparison takes.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** `Authorization: Bearer <token>` names exactly `token`. */
export function isMetricsToken(header: string | undefined, token: string): boolean {
  if (header === undefined || token.length === 0) return false;
  const m = /^Bearer +(\S+)\s*$/i.exec(header);
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}
