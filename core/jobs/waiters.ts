// Long polls in memory: callers parked until something happens, woken directly by the operation
// that makes it happen (no polling interval), or answered "nothing" on timeout or abort.
import type { WaitOptions } from './job-queue.ts';

/**
 * Parks a caller. `arm` registers it and returns how to unregister; the `settle` it receives
 * answers the caller (once). Timeout, abort and `waitMs` 0 answer `none()`.
 */
export function longPoll<T>(opts: WaitOptions, none: () => T, arm: (settle: (v: T | Promise<T>) => void) => () => void): Promise<T> {
  const waitMs = opts.waitMs ?? 0;
  const signal = opts.signal;
  if (waitMs <= 0 || signal?.aborted) return Promise.resolve(none());
  return new Promise<T>((resolve) => {
    let done = false;
    let disarm = (): void => undefined;
    const settle = (v: T | Promise<T>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      disarm();
      resolve(v);
    };
    const onAbort = (): void => settle(none());
    // not unref'd: whoever awaits a long poll is owed an answer, even in a process with nothing else to do
    const timer = setTimeout(onAbort, waitMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    disarm = arm(settle);
    if (done) disarm(); // settled while arming
  });
}

/** parked callers by key, in arrival order */
export class WaiterSet<K, W> {
  private readonly byKey = new Map<K, Set<W>>();

  add(key: K, w: W): () => void {
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(w);
    return () => this.delete(key, w);
  }

  delete(key: K, w: W): void {
    const set = this.byKey.get(key);
    if (set?.delete(w) && set.size === 0) this.byKey.delete(key);
  }

  first(key: K): W | undefined {
    return this.byKey.get(key)?.values().next().value;
  }

  /** removes and returns every waiter of `key` */
  drain(key: K): W[] {
    const set = this.byKey.get(key);
    this.byKey.delete(key);
    return set ? [...set] : [];
  }

  /** removes and returns every waiter */
  drainAll(): W[] {
    const all = [...this.byKey.values()].flatMap((s) => [...s]);
    this.byKey.clear();
    return all;
  }

  /** removes and returns the waiters, under any key, that match */
  drainWhere(match: (w: W) => boolean): W[] {
    const out: W[] = [];
    for (const [key, set] of [...this.byKey]) {
      const hit = [...set].filter(match);
      for (const w of hit) this.delete(key, w);
      out.push(...hit);
    }
    return out;
  }

  count(key: K): number {
    return this.byKey.get(key)?.size ?? 0;
  }

  /** the keys that have waiters */
  keys(): K[] {
    return [...this.byKey.keys()];
  }
}

/** job-stop: job ids a worker must stop, held until the worker's next poll takes them */
export class StopChannel {
  private readonly pending = new Map<string, Set<string>>();
  private readonly waiters = new WaiterSet<string, (ids: string[]) => void>();

  request(workerId: string, jobId: string): void {
    let ids = this.pending.get(workerId);
    if (!ids) this.pending.set(workerId, (ids = new Set()));
    ids.add(jobId);
    const w = this.waiters.first(workerId);
    if (w) w(this.takePending(workerId));
  }

  poll(workerId: string, opts: WaitOptions): Promise<string[]> {
    const ready = this.takePending(workerId);
    if (ready.length > 0) return Promise.resolve(ready);
    return longPoll<string[]>(opts, () => [], (settle) => this.waiters.add(workerId, settle));
  }

  /** the worker is gone: nothing is held for it and its polls answer [] */
  forget(workerId: string): void {
    this.pending.delete(workerId);
    for (const w of this.waiters.drain(workerId)) w([]);
  }

  close(): void {
    for (const w of this.waiters.drainAll()) w([]);
  }

  private takePending(workerId: string): string[] {
    const ids = this.pending.get(workerId);
    this.pending.delete(workerId);
    return ids ? [...ids] : [];
  }
}
