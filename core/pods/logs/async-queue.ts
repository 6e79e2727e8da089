// A queue with one consumer that iterates it (`for await`), for output that arrives by callbacks.
// Back-pressure: past `highWater` items it calls `onFull` (pause the producer); once the consumer
// has taken it down to half, `onDrained` (resume). Ending the iteration early (`break`, return())
// calls `onCancel`, so the producer can stop.
export interface AsyncQueueOptions {
  highWater?: number;
  onFull?: () => void;
  onDrained?: () => void;
  onCancel?: () => void;
}

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  private failWaiter: ((e: unknown) => void) | null = null;
  private done = false;
  private error: unknown = undefined;
  private full = false;
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly opts: AsyncQueueOptions = {}) {}

  /** Adds an item; ignored once ended. */
  push(item: T): void {
    if (this.done) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = this.failWaiter = null;
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (!this.full && this.items.length >= (this.opts.highWater ?? Infinity)) {
      this.full = true;
      this.opts.onFull?.();
    }
  }

  /** No more items: the iteration ends after those queued. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.wakeDrainWaiters();
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = this.failWaiter = null;
      w({ value: undefined, done: true });
    }
  }

  /** The iteration throws `e` after the items queued. */
  fail(e: unknown): void {
    if (this.done) return;
    this.error = e;
    this.done = true;
    this.wakeDrainWaiters();
    if (this.failWaiter && this.items.length === 0) {
      const f = this.failWaiter;
      this.waiter = this.failWaiter = null;
      f(e);
    }
  }

  /** Resolves at once below the high-water mark, else once the consumer took the queue down to half (or it ended). */
  drained(): Promise<void> {
    if (!this.full || this.done) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private wakeDrainWaiters(): void {
    for (const w of this.drainWaiters.splice(0)) w();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) {
          const item = this.items.shift() as T;
          if (this.full && this.items.length <= (this.opts.highWater ?? Infinity) / 2) {
            this.full = false;
            this.opts.onDrained?.();
            this.wakeDrainWaiters();
          }
          return Promise.resolve({ value: item, done: false });
        }
        if (this.done) return this.error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.error);
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiter = resolve;
          this.failWaiter = reject;
        });
      },
      // may be called while a next() waits (a consumer stopping from outside the loop): it ends too
      return: () => {
        const cancelled = !this.done;
        this.done = true;
        this.items.length = 0;
        const w = this.waiter;
        this.waiter = this.failWaiter = null;
        w?.({ value: undefined, done: true });
        this.wakeDrainWaiters();
        if (cancelled) this.opts.onCancel?.();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
