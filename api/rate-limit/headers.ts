// RateLimit and RateLimit-Policy as Structured Field lists (draft-ietf-httpapi-ratelimit-headers),
// one member per window, serialised by the structured-headers library.
import { serializeList, type List } from 'structured-headers';
import type { WindowState } from './limiter.ts';

export function policyHeader(windows: WindowState[]): string {
  const list: List = windows.map((w) => [w.name, new Map([['q', w.quota], ['w', w.seconds]])]);
  return serializeList(list);
}

export function rateLimitHeader(windows: WindowState[]): string {
  const list: List = windows.map((w) => [w.name, new Map([['r', w.remaining], ['t', w.reset]])]);
  return serializeList(list);
}

export function rateLimitHeaders(windows: WindowState[]): Record<string, string> {
  return { 'ratelimit-policy': policyHeader(windows), ratelimit: rateLimitHeader(windows) };
}
