// Which worker serves a request: the ready worker with the fewest requests in flight (least
// outstanding requests; an even pick among ties). With none ready the request is held: the
// autoscaler is told (held requests are its demand, RequestTraffic), and the first worker to enter
// rotation serves it; past the hold it is refused with 503.
import type { WorkerService } from '../core/index.ts';
import { GpufleetError } from '../model/index.ts';
import type { LbWorker, WorkerTable } from './worker-table.ts';

export class Balancer {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly table: WorkerTable,
    private readonly workers: WorkerService,
    private readonly holdMs: number,
  ) {}

  /** The least busy ready worker of the endpoint now, or undefined. */
  pick(endpointId: string): LbWorker | undefined {
    let best: LbWorker | undefined;
    let bestLoad = Infinity;
    let ties = 0;
    for (const w of this.table.workersOf(endpointId)) {
      if (!w.ready) continue;
      const load = this.workers.requests.inFlightOn(w.id);
      if (load < bestLoad) {
        best = w;
        bestLoad = load;
        ties = 1;
      } else if (load === bestLoad && Math.random() * ++ties < 1) best = w; // an even pick among the ties
    }
    return best;
  }

  /**
   * A ready worker, waiting for one up to the hold while the autoscaler starts one. Rejects with 503
   * after the hold; resolves undefined when the caller went away (`signal`).
   */
  async acquire(endpointId: string, signal: AbortSignal): Promise<LbWorker | undefined> {
    const now = this.pick(endpointId);
    if (now) return now;
    const release = this.workers.requests.hold(endpointId);
    this.workers.notifyQueued(endpointId); // scale from zero now, not at the next tick
    const started = Date.now();
    try {
      for (;;) {
        const left = this.holdMs - (Date.now() - started);
        if (left <= 0 || signal.aborted) break;
        await this.wait(endpointId, left, signal);
        const w = this.pick(endpointId);
        if (w) return w;
      }
    } finally {
      release();
    }
    if (signal.aborted) return undefined;
    throw new GpufleetError('UNAVAILABLE', `No worker of endpoint ${endpointId} became ready within ${Math.round(this.holdMs / 1000)} s; try again later.`, {
      headers: { 'retry-after': '10' },
      fields: { endpointId },
    });
  }

  /** A worker of the endpoint entered rotation: held requests try again. */
  wake(endpointId: string): void {
    const set = this.waiters.get(endpointId);
    if (!set) return;
    this.waiters.delete(endpointId);
    for (const w of set) w();
  }

  private wait(endpointId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let set = this.waiters.get(endpointId);
      if (!set) this.waiters.set(endpointId, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }
}
