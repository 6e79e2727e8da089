// A histogram of durations in buckets 2^(1/16) wide (about 4.4 %), kept sparse: percentiles of any
// number of observations in a few dozen counters, mergeable across time slots. A percentile is the
// middle of its bucket, kept within the smallest and largest value seen, so it is within ~2.2 % of
// the exact nearest-rank percentile (docs/serverless.md, "Metrics over time").
import type { StoredHistogram } from '../../model/index.ts';

const STEPS_PER_DOUBLING = 16;

export class LogHistogram {
  private readonly counts = new Map<number, number>();
  count = 0;
  min = Infinity;
  max = -Infinity;

  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    const i = ms < 1 ? -1 : Math.floor(Math.log2(ms) * STEPS_PER_DOUBLING);
    this.counts.set(i, (this.counts.get(i) ?? 0) + 1);
    this.count++;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  merge(other: LogHistogram): void {
    for (const [i, n] of other.counts) this.counts.set(i, (this.counts.get(i) ?? 0) + n);
    this.count += other.count;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
  }

  /** the nearest-rank percentile `q` (0 < q ≤ 1), or null with no observation */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (const i of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(i)!;
      if (seen >= rank) {
        const mid = i < 0 ? 0.5 : 2 ** ((i + 0.5) / STEPS_PER_DOUBLING);
        return Math.min(this.max, Math.max(this.min, mid));
      }
    }
    return this.max;
  }

  /** as the store keeps it (model/records/endpoint-metrics.ts) */
  toStored(): StoredHistogram {
    return { buckets: [...this.counts], count: this.count, min: this.count ? this.min : null, max: this.count ? this.max : null };
  }

  static fromStored(s: StoredHistogram): LogHistogram {
    const h = new LogHistogram();
    for (const [i, n] of s.buckets) h.counts.set(i, n);
    h.count = s.count;
    h.min = s.min ?? Infinity;
    h.max = s.max ?? -Infinity;
    return h;
  }
}
