// The job record of a serverless queue endpoint, as the queue holds it. Every time is a Unix epoch
// in milliseconds and every duration (delayTime, executionTime, policy.*) is in milliseconds, as the
// public platform takes and reports them.

export const JOB_STATUSES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type FinalStatus = Extract<JobStatus, 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT'>;

export function isFinal(status: JobStatus): status is FinalStatus {
  return status !== 'IN_QUEUE' && status !== 'IN_PROGRESS';
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;

/** the limits of `policy` (the queue checks the same numbers: JOB_LIMITS below) */
export const JOB_POLICY_LIMITS = {
  executionTimeout: { min: 5 * SECOND, max: 7 * DAY },
  ttl: { min: 10 * SECOND, max: 7 * DAY },
} as const;

/** Limits and defaults of the public platform (runpod docs: endpoint-configurations, send-requests). */
export const JOB_LIMITS = {
  executionTimeout: { default: 10 * MINUTE, ...JOB_POLICY_LIMITS.executionTimeout },
  ttl: { default: DAY, ...JOB_POLICY_LIMITS.ttl },
  /** `?ttl=` on status (the public docs' example is 6000 ms, under the policy minimum) */
  statusTtl: { min: SECOND, max: 7 * DAY },
  /** results of `run` are kept this long after the job is final */
  asyncRetention: 30 * MINUTE,
  /** results of `runsync` are kept this long after the job is final */
  syncRetention: MINUTE,
} as const;

export interface JobPolicy {
  /** ms a worker may run the job before it is TIMED_OUT and the worker recycled */
  executionTimeout: number;
  /** ms the job lives from submission; a job still IN_QUEUE then expires (see docs/jobs.md) */
  ttl: number;
  /** queued behind normal jobs, and not counted as demand by the autoscaler */
  lowPriority: boolean;
}

/**
 * A job's `s3Config` as the queue keeps it: the secret sealed by the job side (SecretBox), opened
 * only to hand the job to its worker. Opaque to the queue, which stores and returns it as given.
 */
export interface SealedS3Config {
  accessId: string;
  accessSecretSealed: string;
  bucketName: string;
  endpointUrl: string;
  objectPath?: string;
}

export interface EnqueueRequest {
  endpointId: string;
  accountId: string;
  input: unknown;
  webhook?: string;
  s3Config?: SealedS3Config;
  policy?: Partial<JobPolicy>;
  /** submitted by `runsync`: the id starts with `sync-` and the result is kept 1 min, not 30 */
  sync: boolean;
}

/** A job as the queue reports it. Records are immutable snapshots: a change makes a new one. */
export interface Job {
  readonly id: string;
  readonly endpointId: string;
  readonly accountId: string;
  readonly input: unknown;
  readonly webhook?: string;
  readonly s3Config?: SealedS3Config;
  readonly policy: Readonly<JobPolicy>;
  readonly sync: boolean;
  readonly status: JobStatus;
  /** when `run`/`runsync` accepted it */
  readonly createdAt: number;
  /** when it last entered the queue by the user's hand (submission or `retry`); ttl counts from here */
  readonly queuedAt: number;
  /** when the current (or last) attempt was taken by a worker */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** the worker of the current (or last) attempt */
  readonly workerId?: string;
  /** IN_PROGRESS only: the attempt is lost when this passes without a heartbeat */
  readonly leaseExpiresAt?: number;
  /** ms from `queuedAt` to the take of the current (or last) attempt */
  readonly delayTime?: number;
  /** ms from the take to the final status, for jobs that a worker ran */
  readonly executionTime?: number;
  /** the final output, or the last progress update while IN_PROGRESS */
  readonly output?: unknown;
  readonly error?: string;
  /** how many times the job went back to the queue (worker lost, handler error retried, `retry`) */
  readonly retries: number;
  /** automatic requeues since the last submission; the retry caps apply to this */
  readonly autoRetries: number;
  /** IN_QUEUE: when its ttl ends; final: when its result is dropped; IN_PROGRESS: undefined */
  readonly expiresAt?: number;
}

/** The time a final job's result stays readable (docs/jobs.md, "Retention"). */
export function resultExpiry(job: Pick<Job, 'sync' | 'queuedAt' | 'policy'>, finishedAt: number, retention: Retention): number {
  const keep = job.sync ? retention.syncMs : retention.asyncMs;
  const byTtl = Math.min(finishedAt + keep, job.queuedAt + job.policy.ttl);
  // a result is readable for a moment even when the ttl ends sooner, so a poller can see it
  return Math.max(byTtl, finishedAt + Math.min(keep, JOB_LIMITS.syncRetention));
}

export interface Retention {
  asyncMs: number;
  syncMs: number;
}

/** one job of an endpoint's history (`GET /v2/serverless/{id}/jobs`, docs/serverless.md "Job history"); times RFC 3339, durations ms */
export interface JobHistoryItem {
  id: string;
  status: JobStatus;
  /** when `run`/`runsync` accepted it */
  createdAt: string;
  /** when it last entered the queue (submission or retry) */
  queuedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** ms from entering the queue to the take */
  delayTime?: number;
  /** ms from the take to the final status */
  executionTime?: number;
  workerId?: string;
  retries: number;
  /** `runsync` (true) or `run` */
  sync: boolean;
  /** with include=input */
  input?: unknown;
  /** with include=output */
  output?: unknown;
  /** with include=error */
  error?: string;
}

export interface JobHistoryPage {
  jobs: JobHistoryItem[];
  /** the `cursor` of the next page; null on the last one */
  nextCursor: string | null;
}
