// Load-balancing endpoints (docs/gateway.md): what the gateway tells the worker side about HTTP
// traffic, kept in memory. Requests in flight on each worker (a worker with any is RUNNING, and is
// never stopped as idle), requests held while no worker is ready (the demand that scales from zero),
// and each worker's last health check. The autoscaler reads `depth` as it reads a queue's.
import type { QueueDepth } from '../jobs/index.ts';
import type { LivenessTable } from './worker-liveness.ts';

interface EndpointTraffic {
  inFlight: number;
  /** start times (ms) of the requests held for a ready worker, oldest first */
  held: number[];
}

/** What stands in a load-balancing worker's `inProgress` while it serves requests. */
const SERVING: readonly string[] = Object.freeze(['http-requests']);

export class RequestTraffic {
  private readonly endpoints = new Map<string, EndpointTraffic>();
  private readonly workers = new Map<string, number>();

  constructor(
    private readonly liveness: LivenessTable,
    private readonly clock: () => number,
  ) {}

  private of(endpointId: string): EndpointTraffic {
    let t = this.endpoints.get(endpointId);
    if (!t) this.endpoints.set(endpointId, (t = { inFlight: 0, held: [] }));
    return t;
  }

  /** A request now waits for a ready worker; the function ends the wait (served, refused or gone). */
  hold(endpointId: string): () => void {
    const since = this.clock();
    const t = this.of(endpointId);
    t.held.push(since);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const i = t.held.indexOf(since);
      if (i >= 0) t.held.splice(i, 1);
    };
  }

  /** A request is sent to a worker; the function says it ended (once). */
  start(endpointId: string, workerId: string): () => void {
    this.of(endpointId).inFlight++;
    const n = (this.workers.get(workerId) ?? 0) + 1;
    this.workers.set(workerId, n);
    if (n === 1) this.liveness.serving(workerId, SERVING);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.of(endpointId).inFlight--;
      const left = (this.workers.get(workerId) ?? 1) - 1;
      if (left > 0) this.workers.set(workerId, left);
      else {
        this.workers.delete(workerId);
        this.liveness.serving(workerId, []);
      }
    };
  }

  /** Requests in flight on a worker now. */
  inFlightOn(workerId: string): number {
    return this.workers.get(workerId) ?? 0;
  }

  /** What stands in a worker's `inProgress` (for WorkerService.seen from a health check). */
  serving(workerId: string): readonly string[] {
    return this.inFlightOn(workerId) > 0 ? SERVING : [];
  }

  /** The endpoint's demand as the autoscaler reads a queue's: held requests queued, in-flight ones in progress. */
  depth(endpointId: string): QueueDepth {
    const t = this.endpoints.get(endpointId);
    const oldest = t?.held[0];
    return {
      inQueue: t?.held.length ?? 0,
      lowPriority: 0,
      inProgress: t?.inFlight ?? 0,
      oldestAgeMs: oldest === undefined ? 0 : Math.max(0, this.clock() - oldest),
      waitingWorkers: 0,
    };
  }
}
