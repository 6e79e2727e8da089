// Long polls whose answer lives in the database. A parked caller is registered first and checks
// after, so a change committed while it checks (on this replica or, by NOTIFY, on another) wakes it
// and it checks again: no wake-up is lost between the check and the wait. The first answer wins;
// timeout and abort answer "nothing".
import type { WaitOptions } from '../job-queue.ts';

export interface Slot<T> {
  /** something may have changed: check again (once more, after a check already in flight); false if it cannot (held, finished) */
  wake(): boolean;
  /** for a direct hand-off: true if the caller is waiting and not checking; it is then held for `fulfil` */
  reserve(): boolean;
  /** after `reserve`: answers the caller; false (and the caller answered "nothing") if it went away meanwhile */
  fulfil(v: T | undefined): boolean;
  /** answers "nothing" now (the worker is lost, the endpoint deleted, the queue closed) */
  cancel(): void;
  /** resolves when a check in flight has ended (at once when none is) */
  checked(): Promise<void>;
}

export interface ParkOptions<T> extends WaitOptions {
  /** an answer that arrived for a caller that was cancelled or aborted meanwhile (a take undoes it before answering) */
  onLate?: (v: T) => Promise<void>;
}

/** a caller's wait options as `park` takes them (no wait unless asked for) */
export function waitOpts(opts: WaitOptions | undefined): WaitOptions {
  return { waitMs: opts?.waitMs ?? 0, ...(opts?.signal ? { signal: opts.signal } : {}) };
}

/** checks once at once, then on every wake until an answer, the timeout or the abort */
export function park<T>(opts: ParkOptions<T>, check: () => Promise<T | undefined>, register: (slot: Slot<T>) => () => void): Promise<T | undefined> {
  const signal = opts.signal;
  return new Promise<T | undefined>((resolve, reject) => {
    let state: 'idle' | 'checking' | 'reserved' | 'undoing' | 'done' = 'idle';
    let again = false;
    let expired = (opts.waitMs ?? 0) <= 0 || signal?.aborted === true;
    let cancelled = false;
    let timer: NodeJS.Timeout | undefined;
    let unregister = (): void => undefined;
    let checkedWaiters: (() => void)[] = [];
    const checkEnded = (): void => {
      const ws = checkedWaiters;
      checkedWaiters = [];
      for (const w of ws) w();
    };
    const gone = (): boolean => cancelled || signal?.aborted === true;
    const finish = (v: T | undefined, err?: unknown): void => {
      if (state === 'done') return;
      state = 'done';
      clearTimeout(timer);
      signal?.removeEventListener('abort', onEnd);
      unregister();
      if (err !== undefined) reject(err);
      else resolve(v);
    };
    const answer = (v: T | undefined): void => {
      if (v !== undefined && gone() && opts.onLate) {
        state = 'undoing';
        void opts.onLate(v).catch(() => undefined).then(() => finish(undefined));
      } else finish(v);
      checkEnded();
    };
    const run = async (): Promise<void> => {
      state = 'checking';
      for (;;) {
        again = false;
        let v: T | undefined;
        try {
          v = await check();
        } catch (e) {
          finish(undefined, e);
          checkEnded();
          return;
        }
        if (v !== undefined || expired || cancelled) return answer(v);
        if (!again) break;
      }
      state = 'idle';
      checkEnded();
    };
    function onEnd(): void {
      expired = true;
      if (state === 'idle') finish(undefined);
    }
    const slot: Slot<T> = {
      wake() {
        if (state === 'idle') void run();
        else if (state === 'checking') again = true;
        else return false;
        return true;
      },
      reserve() {
        if (state !== 'idle') return false;
        state = 'reserved';
        return true;
      },
      fulfil(v) {
        if (state !== 'reserved') return false;
        if (v !== undefined) {
          // the caller went away meanwhile: the one who reserved undoes the hand-off
          const ok = !gone();
          finish(ok ? v : undefined);
          return ok;
        }
        // the hand-off gave nothing after all: back to waiting
        if (expired || cancelled) finish(undefined);
        else if (again) void run();
        else state = 'idle';
        return false;
      },
      cancel() {
        cancelled = true;
        if (state === 'idle') finish(undefined);
      },
      checked() {
        return state === 'checking' ? new Promise<void>((r) => checkedWaiters.push(r)) : Promise.resolve();
      },
    };
    unregister = register(slot);
    if (!expired) {
      // not unref'd: whoever awaits a long poll is owed an answer
      timer = setTimeout(onEnd, opts.waitMs);
      signal?.addEventListener('abort', onEnd, { once: true });
    }
    // a caller already gone is not looked up at all
    if (signal?.aborted) finish(undefined);
    else void run();
  });
}

/** parked callers by key, in arrival order */
export class Parked<W> {
  private readonly byKey = new Map<string, Set<W>>();

  add(key: string, w: W): () => void {
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(w);
    return () => {
      if (set.delete(w) && set.size === 0 && this.byKey.get(key) === set) this.byKey.delete(key);
    };
  }

  /** the callers of `key`, oldest first (a copy: waking one may remove it) */
  peek(key: string): W[] {
    return [...(this.byKey.get(key) ?? [])];
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  count(key: string): number {
    return this.byKey.get(key)?.size ?? 0;
  }

  /** removes and returns the callers of `key` */
  drain(key: string): W[] {
    const out = this.peek(key);
    this.byKey.delete(key);
    return out;
  }

  drainAll(): W[] {
    const out = [...this.byKey.values()].flatMap((s) => [...s]);
    this.byKey.clear();
    return out;
  }

  /** removes and returns the callers, under any key, that match */
  drainWhere(match: (w: W) => boolean): W[] {
    const out: W[] = [];
    for (const [key, set] of [...this.byKey]) {
      for (const w of set) if (match(w)) out.push(w) && set.delete(w);
      if (set.size === 0) this.byKey.delete(key);
    }
    return out;
  }
}
