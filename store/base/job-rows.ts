// The port of the job queue's rows in a shared database (the PostgreSQL queue, core/jobs/
// postgres-queue.ts): what core's rules read, lock and write, and the few one-statement changes that
// must be one round trip (a take, the common final report, lease renewals, stream chunks). core/
// decides every transition (the embedded queue's JobTable), each deadline and lane; the store keeps
// the rows and their SQL (store/pg/jobs/). docs/postgres-queue.md.
import type { Job, JobStatus, Retention } from '../../model/index.ts';

/** how often a replica of the queue refreshes its row; it counts as alive for 5 of these */
export const JOB_REPLICA_HEARTBEAT_MS = 1000;

/** a job as read, with the row's own bookkeeping */
export interface JobRow {
  job: Job;
  /** the lease token of the current (or last) attempt: one more on every take */
  attempt: number;
  streamLen: number;
  streamRead: number;
}

/** one row's change: the row as read under its lock, the job after, its deadline, its lane and seq when it entered the queue */
export interface RowWrite {
  before: JobRow;
  after: Job;
  /** the next moment the row must be looked at (core: dueAt) */
  dueAt: number | null;
  lane?: number;
  seq?: number;
}

/** which rows a transaction locks (FOR UPDATE), in the order named */
export type RowsToLock =
  | { ids: readonly string[] }
  | { endpointId: string; queuedOnly?: boolean; order: 'seq' | 'lane-seq' }
  | { runningWorker: string };

export interface JobStop {
  workerId: string;
  jobId: string;
}

export interface PendingWebhookRow {
  job: Job;
  attempts: number;
  nextAt: number;
}

export interface StreamChunks {
  status: JobStatus;
  chunks: unknown[];
  next: number;
}

export interface JobCountsRow {
  completed: number;
  failed: number;
  inProgress: number;
  inQueue: number;
  retried: number;
}

export interface JobDepthRow {
  inQueue: number;
  lowPriority: number;
  inProgress: number;
  /** queuedAt of the oldest demand-counting queued job, null when none */
  oldestQueuedAt: number | null;
  /** workers waiting in take on the other live replicas */
  othersWaiting: number;
}

/** a page of `listJobs`: the jobs after this place in newest-first order (createdAt, then id, both descending) */
export interface JobListCursor {
  createdAt: number;
  id: string;
}

/** which of an endpoint's jobs `listJobs` answers */
export interface JobListFilter {
  endpointId: string;
  /** only this account's jobs (the caller's) */
  accountId: string;
  /** only these statuses; absent: every status */
  statuses?: readonly JobStatus[];
  /** only the jobs after this place; absent: from the newest */
  after?: JobListCursor;
  limit: number;
  /**
   * the bodies to read (a store may leave the others out: PostgreSQL then reads no TOASTed body of a
   * page it only lists); a job comes back with `input` null and no `output`/`error` where not asked
   */
  bodies?: ReadonlySet<'input' | 'output' | 'error'>;
}

export interface FinalReport {
  output?: unknown;
  error?: string;
}

/** statements inside one transaction (rows locked here stay locked until it ends) */
export interface JobRowsTx {
  lockOne(jobId: string): Promise<JobRow | undefined>;
  lock(which: RowsToLock): Promise<JobRow[]>;
  /** rows whose deadline is due, claimed with SKIP LOCKED (replicas each claim other rows) */
  lockDue(now: number, limit: number): Promise<JobRow[]>;
  /** `n` new places at the back of the lanes, in order */
  nextSeqs(n: number): Promise<number[]>;
  /** conditional on each row's status and lease token as read; refuses the transaction if one moved */
  write(writes: readonly RowWrite[]): Promise<void>;
  remove(jobIds: readonly string[]): Promise<void>;
  removeEndpoint(endpointId: string): Promise<void>;
  addStops(stops: readonly JobStop[], at: number): Promise<void>;
  dropStopsOf(workerIds: readonly string[]): Promise<void>;
  /** final jobs with a webhook: their delivery pending from this commit, owned by `owner` */
  queueWebhooks(finals: readonly Job[], now: number, owner: string): Promise<void>;
  /** deliveries of replicas that stopped or look dead, now `owner`'s; with `own` also those `owner` had */
  takePendingWebhooks(owner: string, now: number, own: boolean): Promise<PendingWebhookRow[]>;
}

/**
 * A failure of the database as the queue's callers see it (`error`: 503 STORE_UNAVAILABLE while the
 * database is unreachable, cannot write or is short of resources; anything else as it is), and what
 * it says of the database until something proves otherwise (for /readyz): `unreachable` (until a
 * statement succeeds) or `unwritable` (until a write probe succeeds), with why. A server short of
 * memory or connections is neither: the next call may pass.
 */
export interface JobRowsFailure {
  error: unknown;
  unreachable?: string;
  unwritable?: string;
}

export interface JobRows {
  /** refuses (an error naming the fix) when the database lacks the queue's tables: `gpufleet db migrate` makes them */
  checkSchema(): Promise<void>;
  tx<T>(fn: (t: JobRowsTx) => Promise<T>): Promise<T>;
  find(jobId: string): Promise<JobRow | undefined>;
  insert(job: Job, lane: number, attempt: number, dueAt: number | null): Promise<void>;
  /** IN_QUEUE → IN_PROGRESS for `workerId`, up to `max`, in lane order (SKIP LOCKED) */
  claim(endpointId: string, workerId: string, max: number, at: number, leaseMs: number): Promise<Job[]>;
  /** a chunk from the lease holder, renewing its lease to `leaseUntil`; false when it does not hold the job */
  appendChunk(jobId: string, workerId: string, chunk: unknown, leaseUntil: number): Promise<boolean>;
  /** the chunks from the job's cursor (advanced, compare-and-set) or from `from` */
  readChunks(jobId: string, from: number | undefined, now: number): Promise<StreamChunks | undefined>;
  /** the common final report in one statement; undefined when the job needs the transaction path */
  finishHeld(jobId: string, workerId: string, result: FinalReport, at: number, retention: Retention): Promise<Job | undefined>;
  /** the leases of the jobs `workerId` holds and that have not run out; answers their ids */
  renewLeases(workerId: string, jobIds: readonly string[], until: number, now: number): Promise<Set<string>>;
  completedAfter(endpointId: string, after: { finishedAt: number; id: string }, limit: number, now: number): Promise<Job[]>;
  /** the endpoint's jobs the queue still holds (queued, running, final within retention), newest first: one page */
  listJobs(filter: JobListFilter, now: number): Promise<Job[]>;
  counts(endpointId: string, now: number): Promise<JobCountsRow>;
  depth(endpointId: string, now: number, replicaId: string): Promise<JobDepthRow>;
  heldBy(workerId: string): Promise<string[]>;
  /** the earliest deadline of any row, null when none */
  soonestDue(): Promise<number | null>;
  /** the job-stop requests for `workerId`, handed over (deleted) */
  takeStops(workerId: string): Promise<string[]>;
  restoreStops(workerId: string, jobIds: readonly string[], at: number): Promise<void>;
  pruneStops(before: number): Promise<void>;
  webhookAttempted(jobId: string, owner: string, attempts: number, nextAt: number): Promise<void>;
  webhookSettled(jobId: string, owner: string): Promise<void>;
  /** registers the replica; when no other is alive, running leases get `now + leaseMs` (the control plane was down) */
  joinReplicas(replicaId: string, now: number, leaseMs: number): Promise<{ leasesExtended: number }>;
  refreshReplica(replicaId: string, now: number, waiting: Record<string, number>): Promise<void>;
  leaveReplicas(replicaId: string): Promise<void>;
  /** tells the other replicas (a NOTIFY, sent after the commit) */
  announce(payload: string): Promise<void>;
  /** listens for the other replicas' announcements; `onResume` after a lost connection came back */
  listen(onMessage: (payload: string) => void, onResume: () => void): Promise<{ close(): Promise<void> }>;
  /** a write that learns whether the database takes writes again (store/pg/write-probe.ts) */
  probeWrite(): Promise<void>;
  /** a failure of the database: what callers see, and what it says of the database now */
  failure(e: unknown): JobRowsFailure;
  /** a connection lost by an idle client must not end the process: held while the queue is open */
  holdErrors(): () => void;
}
