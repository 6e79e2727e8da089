// Time slots of a fixed width per key (an endpoint, a GPU), kept a fixed time in this process's memory:
// the store behind the metrics-over-time routes (GET /v2/serverless/{id}/metrics, docs/serverless.md;
// GET /v2/hosts/{id}/metrics, docs/gpu-metrics.md). A slot exists only where something was recorded;
// a query folds the slots of each bucket of its window (metrics-window.ts) into that bucket's answer.
export const HISTORY_SLOT_MS = 10_000;
export const HISTORY_RETENTION_MS = 24 * 3600_000;

export const slotOf = (t: number): number => Math.floor(t / HISTORY_SLOT_MS) * HISTORY_SLOT_MS;

export class SlotHistory<S> {
  private readonly slots = new Map<string, Map<number, S>>();

  constructor(
    private readonly empty: () => S,
    private readonly retentionMs = HISTORY_RETENTION_MS,
  ) {}

  /** The slot of `key` that holds time `t`, made empty where there is none yet. */
  at(key: string, t: number): S {
    let m = this.slots.get(key);
    if (!m) this.slots.set(key, (m = new Map()));
    const start = slotOf(t);
    let s = m.get(start);
    if (!s) m.set(start, (s = this.empty()));
    return s;
  }

  /** the slots of `key` (slot start → slot), none where nothing was recorded */
  of(key: string): ReadonlyMap<number, S> | undefined {
    return this.slots.get(key);
  }

  keys(): string[] {
    return [...this.slots.keys()];
  }

  forget(key: string): void {
    this.slots.delete(key);
  }

  /** Drops the slots older than the retention (and keys left with none). */
  prune(now: number): void {
    const cutoff = now - this.retentionMs;
    for (const [key, m] of this.slots) {
      for (const at of m.keys()) if (at < cutoff) m.delete(at);
      if (m.size === 0) this.slots.delete(key);
    }
  }

  /**
   * The buckets [start, start + step) of the window [from, to) (all multiples of HISTORY_SLOT_MS), each
   * folded from the slots recorded within it, oldest first (none: an empty list).
   */
  buckets<B>(key: string, from: number, to: number, step: number, fold: (slots: S[], start: number, end: number) => B): B[] {
    return foldSlots(this.slots.get(key), from, to, step, fold);
  }
}

/** The buckets of a window over one key's slots (slot start → slot), as SlotHistory.buckets. */
export function foldSlots<S, B>(slots: ReadonlyMap<number, S> | undefined, from: number, to: number, step: number, fold: (slots: S[], start: number, end: number) => B): B[] {
  const out: B[] = [];
  for (let start = from; start < to; start += step) {
    const end = Math.min(start + step, to);
    const within: S[] = [];
    if (slots) for (let t = start; t < end; t += HISTORY_SLOT_MS) {
      const s = slots.get(t);
      if (s) within.push(s);
    }
    out.push(fold(within, start, end));
  }
  return out;
}
