// Per-user fixed windows (minute, hour, day) aligned to the epoch, so `t` is simply the seconds left
// in the current window. Counters live in memory: a restart forgives, which the docs say. A request
// costs units: one for REST, one per top-level field for GraphQL (docs/rate-limits.md).
import { GpufleetError } from '../../model/index.ts';

export { WINDOWS, DEFAULT_QUOTAS, parseQuotas, type WindowName, type Quotas } from '../../model/index.ts';
import type { WindowName, Quotas } from '../../model/index.ts';
import { WINDOWS } from '../../model/index.ts';

export interface WindowState {
  name: WindowName;
  quota: number;
  seconds: number;
  remaining: number;
  /** seconds until the window resets */
  reset: number;
}

interface Counter {
  start: number[];
  used: number[];
}

/** What a counted request took, so it can be given back: its units and the windows they went into. */
export interface Charge {
  subject: string;
  units: number;
  /** start of each window the units were counted in */
  starts: number[];
}

export interface ConsumeResult {
  windows: WindowState[];
  exceeded: WindowState[];
  charge: Charge | null;
}

/**
 * What the request guard counts requests with: this process's counters (RateLimiter), or counters
 * the replicas of one database share (SharedRateLimiter, shared-limiter.ts).
 */
export interface RequestLimiter {
  consume(subject: string, nowMs?: number, units?: number): ConsumeResult | Promise<ConsumeResult>;
  refund(charge: Charge): void | Promise<void>;
}

export class RateLimiter implements RequestLimiter {
  private readonly counters = new Map<string, Counter>();
  private sweepAt = 0;

  constructor(private readonly quotas: Quotas) {}

  /**
   * Counts `units` for `subject` in every window, unless a window has fewer units left: then nothing
   * is counted, `charge` is null and `exceeded` names the windows that cannot take them.
   */
  consume(subject: string, nowMs = Date.now(), units = 1): ConsumeResult {
    const now = Math.floor(nowMs / 1000);
    this.sweep(now);
    let c = this.counters.get(subject);
    if (!c) this.counters.set(subject, (c = { start: [0, 0, 0], used: [0, 0, 0] }));
    const windows: WindowState[] = [];
    const exceeded: WindowState[] = [];
    WINDOWS.forEach((w, i) => {
      const start = now - (now % w.seconds);
      if (c.start[i] !== start) {
        c.start[i] = start;
        c.used[i] = 0;
      }
      const quota = this.quotas[w.name];
      const state = { name: w.name, quota, seconds: w.seconds, remaining: quota - c.used[i]!, reset: start + w.seconds - now };
      if (state.remaining < units) exceeded.push(state);
      windows.push(state);
    });
    let charge: Charge | null = null;
    if (exceeded.length === 0) {
      windows.forEach((s, i) => {
        c.used[i]! += units;
        s.remaining -= units;
      });
      charge = { subject, units, starts: [...c.start] };
    }
    for (const s of windows) s.remaining = Math.max(0, s.remaining);
    return { windows, exceeded, charge };
  }

  /** Gives a charge back, in the windows that are still the ones it was counted in. */
  refund(charge: Charge): void {
    const c = this.counters.get(charge.subject);
    if (!c) return;
    charge.starts.forEach((start, i) => {
      if (c.start[i] === start) c.used[i] = Math.max(0, c.used[i]! - charge.units);
    });
  }

  /** drops subjects whose day window has passed, so idle callers cost no memory */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 3600;
    const day = now - (now % 86400);
    for (const [k, c] of this.counters) if ((c.start[2] ?? 0) < day) this.counters.delete(k);
  }
}

export function rateLimitError(exceeded: WindowState[], headers: Record<string, string>, units = 1): GpufleetError {
  const wait = Math.max(...exceeded.map((w) => w.reset));
  const names = exceeded.map((w) => `${w.name} (${w.quota} units per ${w.seconds} s)`).join(' and ');
  const detail =
    units === 1
      ? `Rate limit exceeded for the ${names} window; retry in ${wait} s.`
      : `This request costs ${units} units, more than the ${names} window has left; retry in ${wait} s.`;
  return new GpufleetError('RATE_LIMITED', detail, {
    headers: { ...headers, 'retry-after': String(wait) },
    fields: { windows: exceeded.map((w) => w.name), units },
  });
}
