// The port of the durable job queue, with two implementations: embedded-queue.ts keeps its changes
// in a log in the data directory (a RecordLog of store/, job-log.ts), postgres-queue.ts keeps its own tables in the
// database and takes with `FOR UPDATE SKIP LOCKED` (pg/, docs/postgres-queue.md). Every mutating call
// resolves only once its change is durable.
//
// Errors are GpufleetError (model/base/errors.ts): NOT_FOUND for an unknown or expired job,
// JOB_LEASE_LOST / JOB_ALREADY_FINAL for worker calls on a job the worker no longer holds,
// INVALID_TRANSITION for cancel/retry from a status that does not allow it, VALIDATION_FAILED for a
// bad request.
import type { EnqueueRequest, Job, JobStatus } from '../../model/index.ts';
import type { JobListFilter } from '../../store/index.ts';

export interface WaitOptions {
  /** how long to wait for something to happen; 0 answers at once */
  waitMs?: number;
  /** aborts the wait (the HTTP request went away): resolves with the "nothing" answer */
  signal?: AbortSignal;
}

export interface TakeOptions extends WaitOptions {
  /** how many jobs at most (job-take-batch); default 1 */
  max?: number;
}

export interface CompleteRequest {
  output?: unknown;
  /** the handler's error; its presence makes the attempt a failure */
  error?: string;
}

export interface StreamRead {
  status: JobStatus;
  /** the chunks not returned by an earlier read */
  chunks: unknown[];
  /** index of the next chunk */
  next: number;
}

export interface HeartbeatResult {
  /** leases extended */
  renewed: string[];
  /** ids the worker reported that it does not hold (final, requeued, or another worker's) */
  notHeld: string[];
}

/** health `jobs`: over the jobs the queue still holds (within retention) */
export interface EndpointCounts {
  completed: number;
  /** FAILED and TIMED_OUT */
  failed: number;
  inProgress: number;
  inQueue: number;
  /** held jobs that went back to the queue at least once */
  retried: number;
}

/** what the autoscaler reads (QUEUE_DELAY and REQUEST_COUNT scaling) */
export interface QueueDepth {
  /** queued jobs that count as demand (not lowPriority) */
  inQueue: number;
  lowPriority: number;
  inProgress: number;
  /** ms the oldest demand-counting queued job has waited; 0 when none */
  oldestAgeMs: number;
  /** workers waiting in take right now (idle) */
  waitingWorkers: number;
}

export interface RecycleEvent {
  workerId: string;
  jobId: string;
  reason: 'execution-timeout';
}

/** a final job's webhook delivery that was neither made nor given up (docs/jobs.md, "Webhooks") */
export interface PendingWebhook {
  /** the job as it became final (its `webhook` is the URL) */
  job: Job;
  /** attempts made so far (0: none yet) */
  attempts: number;
  /** when the next attempt is due (ms since the epoch) */
  nextAt: number;
}

/** a place in the order of `completedJobs` (finishedAt, then id): the jobs after it are answered */
export interface CompletedCursor {
  finishedAt: number;
  id: string;
}

export interface DeleteEndpointResult {
  cancelled: number;
  removed: number;
}

export interface JobQueue {
  enqueue(req: EnqueueRequest): Promise<Job>;
  /** long poll: jobs put IN_PROGRESS under a lease for `workerId`; [] on timeout or abort */
  take(endpointId: string, workerId: string, opts?: TakeOptions): Promise<Job[]>;
  /** an IN_PROGRESS update from the lease holder (not final); renews the lease */
  progress(jobId: string, workerId: string, output: unknown): Promise<Job>;
  appendStream(jobId: string, workerId: string, chunk: unknown): Promise<void>;
  /**
   * chunks not returned before (a cursor kept per job), or from `from` when given. With `waitMs`,
   * a read that finds nothing new on a job still running waits for a chunk or the final status.
   */
  readStream(jobId: string, from?: number, opts?: WaitOptions): Promise<StreamRead | undefined>;
  /** the final report of the lease holder; at most once per attempt */
  complete(jobId: string, workerId: string, result: CompleteRequest): Promise<Job>;
  heartbeat(workerId: string, jobIds: readonly string[]): Promise<HeartbeatResult>;
  /**
   * the worker is gone: its jobs go back to the queue (retry counted) or FAILED past the cap. With
   * `jobIds`, only those of them the worker holds (it said it no longer has them; it lives on): they
   * go back the same way (the worker is not told to stop them: it may take one again); its other
   * jobs, parked take and stop requests are left alone.
   */
  workerLost(workerId: string, reason: string, jobIds?: readonly string[]): Promise<Job[]>;
  cancel(jobId: string): Promise<Job>;
  /** FAILED or TIMED_OUT only: same id, back to IN_QUEUE */
  retry(jobId: string): Promise<Job>;
  /** queued jobs of the endpoint become CANCELLED; resolves with how many */
  purge(endpointId: string): Promise<number>;
  /** cancels queued and running jobs (CANCELLED), then removes every job of the endpoint */
  deleteEndpoint(endpointId: string): Promise<DeleteEndpointResult>;
  get(jobId: string): Promise<Job | undefined>;
  /**
   * `?ttl=` on status: the job (still queued) or its result (final) is dropped `ttlMs` after now,
   * in place of what its policy and the retention said; a running job keeps running and its result
   * is dropped then at the latest (docs/jobs.md, "Retention and ttl")
   */
  setTtl(jobId: string, ttlMs: number): Promise<Job>;
  /** ids of the jobs the worker holds IN_PROGRESS right now */
  heldBy(workerId: string): Promise<string[]>;
  /** resolves once the job is final, or with its current state when the wait ends */
  waitForFinal(jobId: string, opts?: WaitOptions): Promise<Job | undefined>;
  /** job-stop long poll: ids the worker must stop (cancelled, timed out); [] on timeout */
  stopRequests(workerId: string, opts?: WaitOptions): Promise<string[]>;
  counts(endpointId: string): Promise<EndpointCounts>;
  depth(endpointId: string): Promise<QueueDepth>;
  /** called once per job reaching a final status, after it is durable; returns an unsubscribe */
  onFinal(listener: (job: Job) => void): () => void;
  /** a worker that must be recycled (its job ran past executionTimeout) */
  onRecycle(listener: (event: RecycleEvent) => void): () => void;
  /**
   * why the queue cannot make changes durable right now (closed, its last write failed and none
   * succeeded since), or null; /readyz reports it (optional: a queue without it counts as ready)
   */
  writeBlocker?(): string | null;
  /**
   * Webhook deliveries, kept durably so that they survive a restart (optional: without them a
   * sender delivers from memory only). A job with a webhook that becomes final is pending from its
   * final record on; the sender records each failed attempt and clears it once delivered or given up.
   */
  pendingWebhooks?(): Promise<PendingWebhook[]>;
  /** an attempt failed: `attempts` made so far, the next one due at `nextAt` */
  webhookAttempted?(jobId: string, attempts: number, nextAt: number): Promise<void>;
  /** delivered or given up: forgotten */
  webhookSettled?(jobId: string): Promise<void>;
  /**
   * an outbox that several replicas share (PostgreSQL): how often a sender asks `pendingWebhooks`
   * again, for the deliveries of replicas that stopped (absent: only when it starts)
   */
  readonly webhookPollMs?: number;
  /**
   * The COMPLETED jobs of the endpoint that the queue still holds (within retention) and that come
   * after `after` in the order (finishedAt, id), in that order, at most `limit`: a page; the next one
   * starts after its last job. `{finishedAt: t, id: ''}` starts with the jobs finished at `t`. What
   * is done on a final job outside the queue (a public model's charge) is made good from this after
   * a crash (optional: without it that is done from `onFinal` only).
   */
  completedJobs?(endpointId: string, after: CompletedCursor, limit: number): Promise<Job[]>;
  /**
   * An endpoint's jobs that one account sent and the queue still holds (queued, running, final
   * within retention: what `get` shows), newest first by (createdAt, id), after `filter.after`, at
   * most `filter.limit`, of `filter.statuses` when given: one page of the job history route.
   */
  listJobs(filter: JobListFilter): Promise<Job[]>;
  close(): Promise<void>;
}
