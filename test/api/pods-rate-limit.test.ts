// Part 8 and 7.2: per-user fixed windows (minute, hour, day). With a quota of 5 a minute the sixth
// request is 429 with Retry-After, a detail naming the window, and the RateLimit headers; other users
// are not affected. The window arithmetic (several windows spent at once) is checked on the limiter.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RateLimiter, parseQuotas, rateLimitError } from '../../api/rate-limit/limiter.ts';
import { policyHeader, rateLimitHeader, rateLimitHeaders } from '../../api/rate-limit/headers.ts';
import fc from 'fast-check';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { call, createPod, expectProblem, expectRateLimitHeaders, gpuBody, startPodsControlPlane } from './pods-helpers.ts';
import { parseList } from 'structured-headers';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startPodsControlPlane({ rateLimits: 'minute=5,hour=100,day=1000' });
});
afterAll(async () => cp?.close());

/** waits out the end of the current minute window when less than `margin` seconds remain */
async function freshMinute(margin = 10): Promise<void> {
  const probe = await cp.newAccount('read');
  const c = await call(cp, '/v2/pods', { key: probe.key });
  const t = expectRateLimitHeaders(c.res).limit[0]!.params.t!;
  if (t < margin) await new Promise((r) => setTimeout(r, (t + 1) * 1000));
}

describe('429 after the minute quota', () => {
  test('five requests pass, counting down; the sixth is 429 with Retry-After and the window named', { timeout: 30_000 }, async () => {
    await freshMinute();
    const user = await cp.newAccount('read_write');
    const pod = (await createPod(cp, gpuBody(), user.key)).body.id; // request 1
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await call(cp, `/v2/pods/${pod}`, { key: user.key });
      expect(c.status).toBe(200);
      const { limit, policy } = expectRateLimitHeaders(c.res);
      expect(policy.map((p) => [p.name, p.params.q, p.params.w])).toEqual([['minute', 5, 60], ['hour', 100, 3600], ['day', 1000, 86400]]);
      remaining.push(limit[0]!.params.r!);
      expect(limit[1]!.params.r).toBe(100 - (i + 2));
      expect(limit[2]!.params.r).toBe(1000 - (i + 2));
    }
    expect(remaining).toEqual([3, 2, 1, 0]);

    const stored = await cp.services.store.get('pods', pod);
    // the pod action operation (7.2): 429
    const c = await call(cp, `/v2/pods/${pod}/action`, { method: 'POST', key: user.key, json: { action: 'stop' } });
    expectProblem(c, 429, { code: 'RATE_LIMITED' });
    expect(c.body.detail).toMatch(/minute/);
    expect(c.body.detail).not.toMatch(/hour|day/);
    const retry = c.res.headers.get('retry-after');
    expect(retry).toMatch(/^\d+$/);
    const { limit } = expectRateLimitHeaders(c.res);
    expect(limit[0]!.params.r).toBe(0);
    expect(Number(retry)).toBe(limit[0]!.params.t);
    expect(Number(retry)).toBeGreaterThan(0);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    // hour and day were not spent: their remaining counts did not move on the refused request
    expect(limit[1]!.params.r).toBe(95);
    expect(limit[2]!.params.r).toBe(995);
    // the refused action did nothing
    expect(await cp.services.store.get('pods', pod)).toBe(stored);

    // every route, valid or not, is refused alike, and the refusal is not counted
    for (const [path, init] of [
      ['/v2/pods', {}],
      ['/v2/pods', { method: 'POST', json: gpuBody() }],
      [`/v2/pods/${pod}`, { method: 'PATCH', json: { args: 'x' } }],
      [`/v2/pods/${pod}`, { method: 'DELETE' }],
      ['/v2/nope', {}],
    ] as const) {
      const r = await call(cp, path, { key: user.key, ...init } as Parameters<typeof call>[2]);
      expectProblem(r, 429);
      expect(r.res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(expectRateLimitHeaders(r.res).limit[1]!.params.r).toBe(95);
    }
    // none of the refused requests touched the pod or created one
    expect(await cp.services.store.get('pods', pod)).toBe(stored);
    expect((await cp.services.store.list('pods', { accountId: user.accountId })).length).toBe(1);
  });

  test('limits are per user: another account still has its full quota', { timeout: 30_000 }, async () => {
    await freshMinute();
    const a = await cp.newAccount('read');
    const b = await cp.newAccount('read');
    for (let i = 0; i < 5; i++) expect((await call(cp, '/v2/pods', { key: a.key })).status).toBe(200);
    expectProblem(await call(cp, '/v2/pods', { key: a.key }), 429);
    const other = await call(cp, '/v2/pods', { key: b.key });
    expect(other.status).toBe(200);
    expect(expectRateLimitHeaders(other.res).limit[0]!.params.r).toBe(4);
    // two keys of one account share its windows
    const a2 = (await cp.services.keys.createKey({ accountId: a.accountId, name: 'second', scope: 'read' })).key;
    expectProblem(await call(cp, '/v2/pods', { key: a2 }), 429);
  });

  test('callers without a valid key are limited too, and get the headers on 401', { timeout: 30_000 }, async () => {
    // anonymous callers share the address's windows; spend them
    let last = await call(cp, '/v2/pods', { key: null });
    for (let i = 0; i < 6 && last.status === 401; i++) last = await call(cp, '/v2/pods', { key: 'gf_garbage_key_' + i + '_0123456789' });
    expectProblem(last, 429);
    expect(last.body.detail).toMatch(/minute/);
    // a valid key is its own subject
    const ok = await cp.newAccount('read');
    expect((await call(cp, '/v2/pods', { key: ok.key })).status).toBe(200);
  });
});

describe('limiter arithmetic', () => {
  const at = (iso: string) => Date.parse(iso);

  test('fixed windows aligned to the epoch, reset seconds exact', () => {
    const l = new RateLimiter(parseQuotas('minute=2,hour=3,day=100'));
    const t0 = at('2024-05-01T10:20:30Z');
    const a = l.consume('u', t0);
    expect(a.exceeded).toEqual([]);
    expect(a.windows.map((w) => [w.name, w.remaining, w.reset])).toEqual([
      ['minute', 1, 30],
      ['hour', 2, 2370],
      ['day', 99, 49170],
    ]);
    expect(l.consume('u', t0 + 1000).windows[0]!.remaining).toBe(0);
    const refused = l.consume('u', t0 + 2000);
    expect(refused.exceeded.map((w) => w.name)).toEqual(['minute']);
    // a new minute: allowed again, until the hour is spent
    expect(l.consume('u', at('2024-05-01T10:21:00Z')).exceeded).toEqual([]);
    const both = l.consume('u', at('2024-05-01T10:21:01Z'));
    expect(both.exceeded.map((w) => w.name)).toEqual(['hour']);
  });

  test('several windows spent: Retry-After is the longest wait and the detail names each', () => {
    const l = new RateLimiter(parseQuotas('minute=1,hour=1,day=1'));
    const t0 = at('2024-05-01T23:59:00Z');
    l.consume('u', t0);
    const r = l.consume('u', t0 + 10_000);
    expect(r.exceeded.map((w) => w.name)).toEqual(['minute', 'hour', 'day']);
    const e = rateLimitError(r.exceeded, rateLimitHeaders(r.windows));
    expect(e.status).toBe(429);
    expect(e.headers['retry-after']).toBe('50');
    expect(e.message).toMatch(/minute/);
    expect(e.message).toMatch(/hour/);
    expect(e.message).toMatch(/day/);
    const parsed = parseList(e.headers.ratelimit!);
    expect(parsed.map(([name]) => String(name))).toEqual(['minute', 'hour', 'day']);
  });

  test('quota text', () => {
    expect(parseQuotas('minute=5,hour=100,day=1000')).toEqual({ minute: 5, hour: 100, day: 1000 });
    expect(parseQuotas('hour=7')).toMatchObject({ hour: 7 });
    expect(() => parseQuotas('week=1')).toThrow();
  });

  test('headers parse back to the windows they describe', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.constantFrom('minute', 'hour', 'day'), quota: fc.nat(1e9), seconds: fc.nat(1e6), remaining: fc.nat(1e9), reset: fc.nat(1e6) }), { minLength: 1, maxLength: 3 }),
        (ws) => {
          const windows = ws as Parameters<typeof rateLimitHeader>[0];
          expect(parseList(rateLimitHeader(windows)).map(([n, p]) => [String(n), p.get('r'), p.get('t')])).toEqual(windows.map((w) => [w.name, w.remaining, w.reset]));
          expect(parseList(policyHeader(windows)).map(([n, p]) => [String(n), p.get('q'), p.get('w')])).toEqual(windows.map((w) => [w.name, w.quota, w.seconds]));
        },
      ),
      { numRuns: 300 },
    );
  });
});
