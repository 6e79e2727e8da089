// RateLimit and RateLimit-Policy as Structured Field lists (draft-ietf-httpapi-ratelimit-headers),
// one member per window, serialised by the structured-headers library.
import { serializeList, type List } from 'structured-headers';
import type { WindowState } from './limiter.ts';

// Both headers go on every response: the policy only changes with the configured quotas, so it is
// serialised once per distinct policy; RateLimit changes with every request.
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
  const list: List = windows.map((w) => [w.name, new Map([['r', w.remaining], ['t', w.reset]])]);
  return serializeList(list);
}

export function rateLimitHeaders(windows: WindowState[]): Record<string, string> {
  return { 'ratelimit-policy': policyHeader(windows), ratelimit: rateLimitHeader(windows) };
}
