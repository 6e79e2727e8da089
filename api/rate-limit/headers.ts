// RateLimit and RateLimit-Policy as Structured Field lists (draft-ietf-httpapi-ratelimit-headers),
// one member per window, serialised by the structured-headers library.
import { serializeList, type List } from 'structured-headers';
import type { WindowState } from './limiter.ts';

// Both headers go on every response, so they are on the hot path: the policy only changes with the
// configured quotas (serialised once per distinct policy), and RateLimit is fixed window names with
// non-negative integers, whose serialisation is plain concatenation (test/api/pods-rate-limit.test.ts
// checks it against serializeList).
const policies = new Map<string, string>();

export function policyHeader(windows: WindowState[]): string {
  const key = windows.map((w) => `${w.name}:${w.quota}:${w.seconds}`).join(',');
  let value = policies.get(key);
  if (value === undefined) {
    const list: List = windows.map((w) => [w.name, new Map([['q', w.quota], ['w', w.seconds]])]);
    value = serializeList(list);
    policies.set(key, value);
  }
  return value;
}

export function rateLimitHeader(windows: WindowState[]): string {
  let out = '';
  for (const w of windows) out += `${out ? ', ' : ''}"${w.name}";r=${w.remaining};t=${w.reset}`;
  return out;
}

export function rateLimitHeaders(windows: WindowState[]): Record<string, string> {
  return { 'ratelimit-policy': policyHeader(windows), ratelimit: rateLimitHeader(windows) };
}
