// RateLimit is put together from pieces for speed; it must be exactly what the library's
// serializeList gives for the same list, and parse back to the windows' numbers.
import { parseList, serializeList, type List } from 'structured-headers';
import { expect, test } from 'vitest';
import { COST_PARAM, rateLimitHeader } from '../../../api/rate-limit/headers.ts';
import type { WindowState } from '../../../api/rate-limit/limiter.ts';

const windows = (r: number[], t: number[]): WindowState[] =>
  (['minute', 'hour', 'day'] as const).map((name, i) => ({ name, quota: 1000, seconds: [60, 3600, 86400][i]!, remaining: r[i]!, reset: t[i]! }));

const byLibrary = (ws: WindowState[], cost?: number): string =>
  serializeList(ws.map((w) => [w.name, new Map<string, number>([['r', w.remaining], ['t', w.reset], ...(cost === undefined ? [] : [[COST_PARAM, cost] as [string, number]])])]) as List);

test.each([
  [[0, 0, 0], [1, 1, 1], undefined],
  [[999, 123456, 7], [59, 3599, 86399], undefined],
  [[5, 5, 5], [10, 20, 30], 3],
  [[0, 1, 2], [0, 0, 0], 0],
])('remaining %j reset %j cost %s: the same string as serializeList, and it parses back', (r, t, cost) => {
  const ws = windows(r, t);
  const header = rateLimitHeader(ws, cost);
  expect(header).toBe(byLibrary(ws, cost));
  const parsed = parseList(header);
  expect(parsed.map(([name, params]) => [name, params.get('r'), params.get('t'), params.get(COST_PARAM)])).toEqual(ws.map((w) => [w.name, w.remaining, w.reset, cost]));
});
