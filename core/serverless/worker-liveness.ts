// What the control plane hears from each worker (job-take, job-done, ping), kept in memory: it
// changes on every call, and writing it to the store each time would cost more than it is worth.
// Only the first contact (`readyAt`) is stored. After a restart every worker starts from "heard now",
// which gives it a full silence allowance, as the job queue gives its jobs a full lease.
import type { WorkerPod, WorkerState } from '../../model/index.ts';

export interface Liveness {
  /** last protocol call, ms */
  lastSeenAt: number;
  /** job ids the worker last reported holding */
  inProgress: readonly string[];
  /** since when it holds no job (ms); undefined while it holds one */
  idleSince: number | undefined;
}

export class LivenessTable {
  private readonly byWorker = new Map<string, Liveness>();

  constructor(private readonly clock: () => number) {}

  /** The worker's liveness; first asked for: heard now, idle since now. */
  of(workerId: string): Liveness {
    let l = this.byWorker.get(workerId);
    if (!l) {
      const now = this.clock();
      l = { lastSeenAt: now, inProgress: [], idleSince: now };
      this.byWorker.set(workerId, l);
    }
    return l;
  }

  /** A protocol call: the worker is alive and holds `inProgress`. */
  heard(workerId: string, inProgress: readonly string[]): Liveness {
    const now = this.clock();
    const l = this.of(workerId);
    l.lastSeenAt = now;
    if (inProgress.length > 0) l.idleSince = undefined;
    else if (l.inProgress.length > 0 || l.idleSince === undefined) l.idleSince = now;
    l.inProgress = [...inProgress];
    return l;
  }

  forget(workerId: string): void {
    this.byWorker.delete(workerId);
  }
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
  return l && l.inProgress.length > 0 ? 'RUNNING' : 'IDLE';
}

/** In service: not retired, and still meant to run (a crashed container is out until it is retired). */
export function inService(pod: WorkerPod): boolean {
  return pod.worker.retiredReason === null && pod.desiredStatus === 'RUNNING';
}

/** Taken out by the autoscaler or the protocol (terminated); its record goes once its container is gone. */
export function retired(pod: WorkerPod): boolean {
  return pod.worker.retiredReason !== null || pod.desiredStatus === 'TERMINATED';
}
