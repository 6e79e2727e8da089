// The port the job side (the job interface and the worker protocol routes, core/jobs) declares for
// reaching workers; the worker side (core/workers: records, tokens, autoscaler, containers on hosts)
// implements it. A worker authenticates with its own token (RUNPOD_AI_API_KEY inside its container),
// which can do nothing but that worker's protocol calls. Beside the directory, an optional count of an
// endpoint's workers by state, for `GET /v2/{endpointId}/health` `workers` (zeros without it).
// WorkerPorts is the slot the job and worker-protocol services call through: until something is
// registered no worker token authenticates, so every worker protocol call is 401, and health counts
// no workers.

export interface WorkerIdentity {
  workerId: string;
  endpointId: string;
  accountId: string;
  /** the host the worker's container is placed on (a call through a host's relay must come from there) */
  hostId?: string | null;
}

export type WorkerHealthReport =
  | {
      healthy: true;
      /** the jobs the queue says the worker holds */
      inProgress: readonly string[];
      /** what the worker itself says: running something (job-take `job_in_progress=1`, a ping naming
       *  job ids) or nothing; absent when the call does not say (job-done) */
      workerBusy?: boolean;
    }
  /** `?status=unhealthy&check=…&reason=…` on ping: the worker is taken out and replaced */
  | { healthy: false; check: string; reason: string };

export interface WorkerDirectory {
  /** the worker a per-worker token belongs to, or null (unknown, revoked, worker gone) */
  authenticate(token: string): Promise<WorkerIdentity | null>;
  /** the worker called job-take, job-done or ping: it is alive; `busy` while it holds jobs */
  seen(workerId: string, report: WorkerHealthReport): Promise<void>;
  /** job-done with `stopPod: true` (not a fault), or a job past its executionTimeout (`fault: true`:
   *  the endpoint backs off before its next worker): stop this worker and start a fresh one if the
   *  endpoint still needs it. The job side is the only caller, once per cause. */
  recycle(workerId: string, reason: string, opts?: { fault?: boolean }): Promise<void>;
  /** a job was queued for the endpoint: scale from zero now rather than at the next autoscaler tick */
  notifyQueued?(endpointId: string): void;
  /**
   * Why the endpoint can have no worker at all (no enrolled host has any of its GPU types), or null:
   * its queued jobs show THROTTLED with it, and runsync answers at once (docs/serverless.md)
   */
  noWorkerReason?(endpointId: string): Promise<string | null>;
}

/** health `workers`: the public platform's names plus `unhealthy` */
export interface WorkerStateCounts {
  idle: number;
  initializing: number;
  /** initialized and in service: idle + running */
  ready: number;
  running: number;
  throttled: number;
  unhealthy: number;
}

export interface WorkerCountsSource {
  counts(endpointId: string): Promise<WorkerStateCounts>;
}

export function noWorkerCounts(): WorkerStateCounts {
  return { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 };
}

function hasCounts(x: object): x is WorkerCountsSource {
  return typeof (x as Partial<WorkerCountsSource>).counts === 'function';
}

export class WorkerPorts implements WorkerDirectory, WorkerCountsSource {
  private directory: WorkerDirectory | null = null;
  private counter: WorkerCountsSource | null = null;

  /**
   * The worker side's directory (and counts; taken from the directory itself when it has a
   * `counts` method). Replaces what was registered before; the returned function unregisters.
   */
  register(directory: WorkerDirectory, counts?: WorkerCountsSource): () => void {
    const c = counts ?? (hasCounts(directory) ? directory : null);
    this.directory = directory;
    this.counter = c;
    return () => {
      if (this.directory === directory) {
        this.directory = null;
        this.counter = null;
      }
    };
  }

  get registered(): boolean {
    return this.directory !== null;
  }

  authenticate(token: string): Promise<WorkerIdentity | null> {
    return this.directory ? this.directory.authenticate(token) : Promise.resolve(null);
  }

  seen(workerId: string, report: WorkerHealthReport): Promise<void> {
    return this.directory ? this.directory.seen(workerId, report) : Promise.resolve();
  }

  recycle(workerId: string, reason: string, opts?: { fault?: boolean }): Promise<void> {
    return this.directory ? this.directory.recycle(workerId, reason, opts) : Promise.resolve();
  }

  notifyQueued(endpointId: string): void {
    this.directory?.notifyQueued?.(endpointId);
  }

  noWorkerReason(endpointId: string): Promise<string | null> {
    return this.directory?.noWorkerReason?.(endpointId) ?? Promise.resolve(null);
  }

  counts(endpointId: string): Promise<WorkerStateCounts> {
    return this.counter ? this.counter.counts(endpointId) : Promise.resolve(noWorkerCounts());
  }
}
