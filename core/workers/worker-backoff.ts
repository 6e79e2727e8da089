// Replacement backoff per endpoint: a worker taken out for a fault (its container crashed or exited,
// its start failed, it reported itself unhealthy, it stayed silent, its job ran past the execution
// timeout) makes the endpoint wait before its next new worker, doubling with each fault in the
// window. An image that crash-loops therefore costs a few short-lived workers, not a tight loop of
// billed starts; a healthy endpoint forgets its faults once the window has passed.
export interface BackoffOptions {
  /** wait after the first fault in the window; default 5 s */
  baseMs: number;
  /** longest wait; default 5 min */
  maxMs: number;
  /** faults older than this no longer count; default 10 min */
  windowMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 5_000, maxMs: 5 * 60_000, windowMs: 10 * 60_000 };

interface Fault {
  at: number;
  reason: string;
}

export class EndpointBackoff {
  private readonly faults = new Map<string, Fault[]>();

  constructor(private readonly opts: BackoffOptions) {}

  fault(endpointId: string, at: number, reason: string): void {
    const list = this.recent(endpointId, at);
    list.push({ at, reason });
    this.faults.set(endpointId, list);
  }

  /** faults in the window before `now` */
  count(endpointId: string, now: number): number {
    return this.recent(endpointId, now).length;
  }

  /** until when no new worker starts (ms), or 0; with the last fault's reason */
  until(endpointId: string, now: number): { until: number; reason: string | null; faults: number } {
    const list = this.recent(endpointId, now);
    const last = list[list.length - 1];
    if (!last) return { until: 0, reason: null, faults: 0 };
    const wait = Math.min(this.opts.baseMs * 2 ** (list.length - 1), this.opts.maxMs);
    return { until: last.at + wait, reason: last.reason, faults: list.length };
  }

  forget(endpointId: string): void {
    this.faults.delete(endpointId);
  }

  private recent(endpointId: string, now: number): Fault[] {
    const list = (this.faults.get(endpointId) ?? []).filter((f) => now - f.at < this.opts.windowMs);
    if (list.length) this.faults.set(endpointId, list);
    else this.faults.delete(endpointId);
    return list;
  }
}
