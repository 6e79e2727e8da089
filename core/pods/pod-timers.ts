// Stop and terminate timers (GraphQL `stopAfter` / `terminateAfter`, docs/pods.md#stop-and-terminate-timers):
// an RFC 3339 instant stored with the pod, so it survives a control-plane restart. A loop beside the
// server keeps the pods that carry one in memory (read once at start, then followed through the store's
// commits, every replica's) and, once per reconcile interval, carries out those that are due: never
// before their time, at most one interval after it. Each is one transaction that reads the pod again,
// so two replicas firing the same timer do it once.
import { fail422, type PodRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';

/** An ISO 8601 date-time with a zone ("2026-05-01T12:00:00Z", "…+02:00", fractions allowed), as UTC RFC 3339. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The value a client sent for `field` as a UTC instant; a value that is not one is a 422 naming the field. */
export function parseTimer(value: string, field: string): string {
  const ms = DATE_TIME.test(value.trim()) ? Date.parse(value.trim()) : NaN;
  if (!Number.isFinite(ms))
    fail422('pod', [`$.input.${field}: "${value.slice(0, 64)}" is not an ISO 8601 date-time with a time zone, such as 2026-05-01T12:00:00Z`]);
  return new Date(ms).toISOString();
}

/** Which of the pod's timers is due at `now`: terminate first (it also ends a stop timer). */
export function dueTimer(pod: Pick<PodRecord, 'stopAfter' | 'terminateAfter'>, now: number): 'stop' | 'terminate' | null {
  if (pod.terminateAfter && Date.parse(pod.terminateAfter) <= now) return 'terminate';
  if (pod.stopAfter && Date.parse(pod.stopAfter) <= now) return 'stop';
  return null;
}

export interface TimerFirer {
  fireTimer(podId: string, now?: number): Promise<boolean>;
}

export interface PodTimerLoopOptions {
  intervalMs: number;
  /** a timer that could not be carried out (it is tried again at the next interval) */
  onError?: (err: unknown, podId: string) => void;
  now?: () => number;
}

export class PodTimerLoop {
  /** pod id → its earliest timer (ms) */
  private readonly due = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly pods: TimerFirer,
    private readonly opts: PodTimerLoopOptions,
  ) {}

  async start(): Promise<void> {
    // following first, then reading: a timer set while the list is read is not missed
    const toRead = new Set<string>();
    this.unsubscribe = this.store.onCommit((changes) => {
      for (const c of changes) {
        if (c.collection !== 'pods') continue;
        if (c.deleted) this.due.delete(c.id);
        else if (c.record) this.follow(c.id, c.record);
        else toRead.add(c.id);
      }
      for (const id of toRead) void this.store.get('pods', id).then((p) => (p ? this.follow(id, p) : this.due.delete(id)));
      toRead.clear();
    });
    for (const p of await this.store.list('pods')) this.follow(p.id, p);
    const tick = () => {
      this.running = this.pass().finally(() => {
        this.running = null;
        if (this.unsubscribe) this.timer = setTimeout(tick, this.opts.intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Carries out every timer due now; a failure is reported and tried again next time. */
  async pass(): Promise<void> {
    const now = (this.opts.now ?? Date.now)();
    for (const [id, at] of [...this.due]) {
      if (at > now) continue;
      try {
        await this.pods.fireTimer(id, now);
      } catch (err) {
        this.opts.onError?.(err, id);
      }
    }
  }

  private follow(id: string, p: PodRecord): void {
    const times = [p.stopAfter, p.terminateAfter].filter((t): t is string => Boolean(t)).map(Date.parse);
    if (times.length) this.due.set(id, Math.min(...times));
    else this.due.delete(id);
  }
}
