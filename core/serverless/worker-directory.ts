// The port between the job side of serverless (job interface + worker protocol routes, core/jobs)
// and the worker side (worker records, tokens, autoscaler, containers on hosts). The worker side
// implements it; the worker protocol routes call it. A worker authenticates with its own token
// (RUNPOD_AI_API_KEY inside its container), which can do nothing but that worker's protocol calls.

export interface WorkerIdentity {
  workerId: string;
  endpointId: string;
  accountId: string;
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
}
