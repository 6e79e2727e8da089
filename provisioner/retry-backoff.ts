// Per-object retry backoff for the reconcile loop, in the manner of controller-runtime's rate-limited
// requeue: an object whose step failed on a live host (a command that timed out, a network that
// could not be set up, a container docker would not stop) is tried again after 1 s, then 2, 4, … up
// to 60 s, not at every pass. A success forgets the failures; so does a change of what the object is
// asked to be (its `intent`: a user's start, stop, restart or update never waits out a backoff).
// When a wait ends, `wake` is called so the retry comes at the time the pod's reason states, not at
// the next interval's pass. Image pulls keep their own stall backoff (pod-pulls.ts): a pod waiting
// for its pull is not failing.

export interface BackoffSettings {
  /** the first wait */
  baseMs: number;
  /** no wait is longer */
  capMs: number;
  /** each wait is shortened by up to this fraction, at random, so failures of many objects spread out */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 1000, capMs: 60_000, jitter: 0.2 };

interface Failing {
  intent: string;
  failures: number;
  /** performance.now() before which the object is left be */
  retryAt: number;
  timer: NodeJS.Timeout | null;
}

/** The wait before the retry that follows `failures` failures in a row, before jitter. */
export function backoffDelay(failures: number, s: Pick<BackoffSettings, 'baseMs' | 'capMs'>): number {
  return Math.min(s.capMs, s.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

export class RetryBackoff {
  private readonly failing = new Map<string, Failing>();

  constructor(
    /** called with the key when its wait is over */
    private readonly wake: (key: string) => void,
    private readonly settings: BackoffSettings = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * Milliseconds the object still waits before its next try, or 0: it may be acted on now. A new
   * intent forgets the failures (the object is acted on at once).
   */
  waiting(key: string, intent: string): number {
    const f = this.failing.get(key);
    if (!f) return 0;
    if (f.intent !== intent) {
      this.forget(key);
      return 0;
    }
    return Math.max(0, f.retryAt - performance.now());
  }

  /** Records a failure; answers the wait before the next try and how many failures in a row. */
  failed(key: string, intent: string): { delayMs: number; failures: number } {
    const prior = this.failing.get(key);
    const failures = prior && prior.intent === intent ? prior.failures + 1 : 1;
    if (prior?.timer) clearTimeout(prior.timer);
    const delayMs = Math.round(backoffDelay(failures, this.settings) * (1 - this.settings.jitter * this.random()));
    const timer = setTimeout(() => this.wake(key), delayMs + 20);
    timer.unref();
    this.failing.set(key, { intent, failures, retryAt: performance.now() + delayMs, timer });
    return { delayMs, failures };
  }

  /** The object's step succeeded (or the object is gone): its next failure starts from the first wait. */
  forget(key: string): void {
    const f = this.failing.get(key);
    if (!f) return;
    if (f.timer) clearTimeout(f.timer);
    this.failing.delete(key);
  }

  /** Forgets every key `keep` rejects (objects no longer there). */
  retain(keep: (key: string) => boolean): void {
    for (const key of [...this.failing.keys()]) if (!keep(key)) this.forget(key);
  }

  clear(): void {
    this.retain(() => false);
  }
}
