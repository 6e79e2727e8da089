// What the control plane hears from each worker (job-take, job-done, ping), kept in memory: it
// changes on every call, and writing it to the store each time would cost more than it is worth.
// Only the first contact (`readyAt`) is stored. After a restart every worker starts from "heard now",
// which gives it a full silence allowance, as the job queue gives its jobs a full lease.
import type { WorkerPod, WorkerState } from '../../model/index.ts';

export interface Liveness {
  /** last protocol call, ms */
  lastSeenAt: number;
  /** job ids the queue last said the worker holds */
  inProgress: readonly string[];
  /** the worker's own last word: it runs something (job_in_progress=1, a ping naming jobs) */
  workerBusy: boolean;
  /** since when it holds no job (ms); undefined while it holds one */
  idleSince: number | undefined;
  /**
   * load-balancing workers: the gateway's last health check (`GET /ping`), and whether it put the
   * worker in rotation; absent before the first check and for queue workers
   */
  check?: { ready: boolean; detail: string };
}

export class LivenessTable {
  private readonly byWorker = new Map<string, Liveness>();

  constructor(private readonly clock: () => number) {}

  /** The worker's liveness; first asked for: heard now, idle since now. */
  of(workerId: string): Liveness {
    let l = this.byWorker.get(workerId);
    if (!l) {
      const now = this.clock();
      l = { lastSeenAt: now, inProgress: [], workerBusy: false, idleSince: now };
      this.byWorker.set(workerId, l);
    }
    return l;
  }

  /**
   * A protocol call: the worker is alive, the queue says it holds `inProgress`, and the worker says
   * it runs something (`workerBusy`; undefined: the call did not say, the last word stands).
   */
  heard(workerId: string, inProgress: readonly string[], workerBusy?: boolean): Liveness {
    const now = this.clock();
    const l = this.of(workerId);
    const wasBusy = isBusy(l);
    l.lastSeenAt = now;
    l.inProgress = [...inProgress];
    if (workerBusy !== undefined) l.workerBusy = workerBusy;
    if (isBusy(l)) l.idleSince = undefined;
    else if (wasBusy || l.idleSince === undefined) l.idleSince = now;
    return l;
  }

  /** A load-balancing worker's requests in flight changed (the gateway): not a sign of life. */
  serving(workerId: string, inProgress: readonly string[]): void {
    const l = this.of(workerId);
    const wasBusy = isBusy(l);
    l.inProgress = inProgress;
    if (isBusy(l)) l.idleSince = undefined;
    else if (wasBusy) l.idleSince = this.clock();
  }

  /** The gateway's health check of a load-balancing worker: in rotation or not, and what it answered. */
  checked(workerId: string, ready: boolean, detail: string): void {
    this.of(workerId).check = { ready, detail };
  }

  forget(workerId: string): void {
    this.byWorker.delete(workerId);
  }
}

/** Busy: the queue says it holds a job, or the worker says it still runs one (a job the control
 *  plane cancelled or gave to another worker can still be running in its handler). */
export function isBusy(l: Liveness): boolean {
  return l.inProgress.length > 0 || l.workerBusy;
}

/**
 * A worker's public state. A retired worker is UNHEALTHY when it was taken out for a fault (it stays
 * listed briefly so the reason can be read); INITIALIZING until its first protocol call; then RUNNING
 * while it holds a job, IDLE otherwise. THROTTLED has no record: it counts workers the autoscaler
 * wants but cannot place (docs/serverless.md).
 */
export function workerState(pod: WorkerPod, l: Liveness | undefined): WorkerState {
  if (pod.worker.retiredReason !== null || pod.desiredStatus !== 'RUNNING') return 'UNHEALTHY';
  if (pod.worker.readyAt === null) return 'INITIALIZING';
  // a load-balancing worker whose health check stopped answering 200 is out of rotation
  if (l?.check && !l.check.ready) return 'UNHEALTHY';
  return l && isBusy(l) ? 'RUNNING' : 'IDLE';
}

/** In service: not retired, and still meant to run (a crashed container is out until it is retired). */
export function inService(pod: WorkerPod): boolean {
  return pod.worker.retiredReason === null && pod.desiredStatus === 'RUNNING';
}

/** Taken out by the autoscaler or the protocol (terminated); its record goes once its container is gone. */
export function retired(pod: WorkerPod): boolean {
  return pod.worker.retiredReason !== null || pod.desiredStatus === 'TERMINATED';
}
