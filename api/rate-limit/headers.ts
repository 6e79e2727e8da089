// RateLimit and RateLimit-Policy as Structured Field lists (draft-ietf-httpapi-ratelimit-headers),
// one member per window, serialised by the structured-headers library. Quotas are in units: a REST
// request is one unit; a GraphQL request costs one per top-level field, and its RateLimit members say
// so with the vendor parameter `gpufleet-cost` (the draft asks service-specific parameters to carry a
// vendor prefix).
import { serializeInteger, serializeItem, serializeKey, serializeList, type List } from 'structured-headers';
import type { WindowState } from './limiter.ts';

// Both headers go on every response: the policy only changes with the configured quotas, so it is
// serialised once per distinct policy; RateLimit changes with every request.
const policies = new Map<string, string>();

export function policyHeader(windows: WindowState[]): string {
  let key = '';
  for (const w of windows) key += `${w.name}:${w.quota}:${w.seconds},`;
  let value = policies.get(key);
  if (value === undefined) {
    const list: List = windows.map((w) => [w.name, new Map([['q', w.quota], ['w', w.seconds]])]);
    value = serializeList(list);
    policies.set(key, value);
  }
  return value;
}

/** the RateLimit member parameter naming the units a request cost, where that is not simply one */
export const COST_PARAM = 'gpufleet-cost';

/**
 * RateLimit changes with every request, so it is put together from pieces the library serialised:
 * each window's name (once per name), each parameter key (once), and the integers. The result is
 * what `serializeList` gives for the same list (test/api/rate-limit/headers.test.ts), at a fraction of its cost per request.
 */
const memberNames = new Map<string, string>();
const R = `;${serializeKey('r')}=`;
const T = `;${serializeKey('t')}=`;
const COST = `;${serializeKey(COST_PARAM)}=`;

export function rateLimitHeader(windows: WindowState[], cost?: number): string {
  let out = '';
  for (const w of windows) {
    let name = memberNames.get(w.name);
    if (name === undefined) memberNames.set(w.name, (name = serializeItem(w.name)));
    if (out !== '') out += ', ';
    out += name + R + serializeInteger(w.remaining) + T + serializeInteger(w.reset);
    if (cost !== undefined) out += COST + serializeInteger(cost);
  }
  return out;
}

export function rateLimitHeaders(windows: WindowState[], cost?: number): Record<string, string> {
  return { 'ratelimit-policy': policyHeader(windows), ratelimit: rateLimitHeader(windows, cost) };
}
