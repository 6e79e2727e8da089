// The histogram behind the endpoint metrics' percentiles (core/workers/log-histogram.ts): within 2.2 %
// of the exact nearest-rank percentile, kept within the smallest and largest values seen, mergeable.
import { describe, expect, test } from 'vitest';
import { LogHistogram } from '../../../core/workers/log-histogram.ts';

const exact = (sorted: number[], q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;

describe('LogHistogram', () => {
  test('percentiles of spread-out durations are within 2.2 % of the exact ones, and merging two halves changes nothing', () => {
    // a fixed pseudo-random spread over 1 ms … 10 min (log-uniform), as job times are
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const values = Array.from({ length: 5000 }, () => Math.exp(rnd() * Math.log(600_000)));
    const whole = new LogHistogram();
    const a = new LogHistogram();
    const b = new LogHistogram();
    values.forEach((v, i) => {
      whole.add(v);
      (i % 2 ? a : b).add(v);
    });
    a.merge(b);
    const sorted = [...values].sort((x, y) => x - y);
    for (const q of [0.5, 0.9, 0.99]) {
      const e = exact(sorted, q);
      expect(Math.abs(whole.quantile(q)! - e) / e, `p${q * 100}`).toBeLessThan(0.022);
      expect(a.quantile(q)).toBe(whole.quantile(q));
    }
    expect(a.count).toBe(5000);
  });

  test('one value is itself; none is null; sub-millisecond and bad values', () => {
    const h = new LogHistogram();
    expect(h.quantile(0.5)).toBeNull();
    h.add(1234);
    expect(h.quantile(0.5)).toBe(1234);
    expect(h.quantile(0.99)).toBe(1234);
    const z = new LogHistogram();
    z.add(0);
    z.add(Number.NaN);
    z.add(-5);
    expect(z.count).toBe(1);
    expect(z.quantile(0.5)).toBe(0);
  });
});
