// The JobQueue in PostgreSQL, for several control-plane replicas on one database (docs/postgres-queue.md).
// Same observable behaviour as the embedded queue: each change is computed by the embedded queue's
// own JobTable from the same records and written under the row's lock, conditionally on the status
// and lease token read (pg/queue-db.ts). Takes and the deadline sweep claim rows with FOR UPDATE SKIP
// LOCKED, so replicas never hand out one job twice nor fight over the same deadline
// (pg/worker-calls.ts, pg/deadline-sweeper.ts). Dispatch is push: a worker parked in take on this
// replica is handed a job by the enqueue itself (one INSERT, already taken); other replicas are woken
// by a NOTIFY sent right after the commit (pg/wakeups.ts). This file is the port: the job side's
// calls, and the queue's life (open, replicas, close). Its rows and every statement are the store's
// (the port JobRows, store/base/job-rows.ts; store/pg/jobs/): here are the rules only.
import { randomUUID } from 'node:crypto';
import { GpufleetError } from '../../model/index.ts';
import { JOB_REPLICA_HEARTBEAT_MS, type JobListFilter, type JobRows } from '../../store/index.ts';
import { isFinal, JOB_LIMITS, type EnqueueRequest, type Job } from '../../model/index.ts';
import type {
  CompletedCursor, CompleteRequest, DeleteEndpointResult, EndpointCounts, HeartbeatResult, JobQueue, PendingWebhook, QueueDepth, RecycleEvent, StreamRead, TakeOptions,
  WaitOptions,
} from './job-queue.ts';
import type { TableOptions } from './job-table.ts';
import { submission, validateEnqueue } from './job-validation.ts';
import { DEFAULT_LEASE_MS, type QueueRuleOptions } from './queue-options.ts';
import { DeadlineSweeper } from './pg/deadline-sweeper.ts';
import { dueAt, laneOf, submitted, transition } from './pg/job-rules.ts';
import { park, waitOpts } from './pg/parking.ts';
import { QueueDb } from './pg/queue-db.ts';
import { noWakes, Wakeups } from './pg/wakeups.ts';
import { WorkerCalls } from './pg/worker-calls.ts';

export interface PostgresJobQueueOptions extends QueueRuleOptions {
  /**
   * this replica's name in gf_job_replicas, the same across its restarts (its pending webhook
   * deliveries are resumed by it at once; another replica takes them over only once it has stopped
   * or looks dead);
   * default a random one
   */
  replicaId?: string;
}

/** job-stop requests no worker came for are dropped after a day */
const STOP_KEEP_MS = 86_400_000;
/** how long a job cancelled by its endpoint's deletion stays readable to this replica's final waiters */
const REMOVED_FINAL_MS = 5_000;
/** how often a replica refreshes its row (it counts as alive for 5 of these) */
const REPLICA_HEARTBEAT_MS = JOB_REPLICA_HEARTBEAT_MS;
/** several replicas share the webhook outbox: a sender asks this often for deliveries to take over */
const WEBHOOK_POLL_MS = REPLICA_HEARTBEAT_MS;

export class PostgresJobQueue implements JobQueue {
  readonly replicaId: string;
  private readonly leaseMs: number;
  private readonly tableOpts: TableOptions;
  private readonly wakes: Wakeups;
  private readonly db: QueueDb;
  private readonly deadlines: DeadlineSweeper;
  private readonly workers: WorkerCalls;
  /** jobs whose rows an endpoint's deletion removed, as they ended (waitForFinal) */
  private readonly removedFinals = new Map<string, Job>();
  private readonly releaseErrors: () => void;
  private timer: NodeJS.Timeout | undefined;
  /** several replicas share the webhook outbox: a sender asks this often for deliveries to take over */
  readonly webhookPollMs = WEBHOOK_POLL_MS;
  private webhooksResumed = false;

  private constructor(private readonly rows: JobRows, opts: PostgresJobQueueOptions) {
    this.replicaId = opts.replicaId ?? `replica-${randomUUID()}`;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    const maxLostRetries = opts.maxLostRetries ?? 3;
    const retention = { asyncMs: opts.retention?.asyncMs ?? JOB_LIMITS.asyncRetention, syncMs: opts.retention?.syncMs ?? JOB_LIMITS.syncRetention };
    this.tableOpts = { leaseMs: this.leaseMs, retention };
    this.wakes = new Wakeups(rows, this.replicaId);
    this.db = new QueueDb(rows, {
      replicaId: this.replicaId,
      clock: opts.clock ?? Date.now,
      table: this.tableOpts,
      wakes: this.wakes,
      noteDue: (at) => this.deadlines.noteDue(at),
    });
    // the soonest deadline a write can make: a lease, a result's retention, a status ?ttl (1 s at least)
    const minGapMs = Math.min(JOB_LIMITS.statusTtl.min, this.leaseMs, retention.asyncMs, retention.syncMs);
    this.deadlines = new DeadlineSweeper(this.db, { table: this.tableOpts, maxLostRetries, minGapMs });
    this.workers = new WorkerCalls(this.db, this.wakes, this.deadlines, {
      leaseMs: this.leaseMs, maxLostRetries, maxErrorRetries: opts.maxErrorRetries ?? 0, retention,
    });
    // an idle client of the pool losing its connection must not end the process
    this.releaseErrors = rows.holdErrors();
  }

  /**
   * Checks that the database has the queue's tables (made by the store's migrations, never here),
   * starts listening and joins the replicas; `rows` (and the pool under it) stays the caller's.
   */
  static async open(rows: JobRows, opts: PostgresJobQueueOptions = {}): Promise<PostgresJobQueue> {
    const q = new PostgresJobQueue(rows, opts);
    try {
      await rows.checkSchema();
      await q.wakes.start();
      await rows.joinReplicas(q.replicaId, q.now(), q.leaseMs);
    } catch (e) {
      await q.close().catch(() => undefined);
      throw rows.failure(e).error;
    }
    const every = opts.sweepIntervalMs ?? 100;
    if (every > 0) {
      let lastRefresh = 0;
      q.timer = setInterval(() => {
        void q.sweep().catch(() => undefined);
        if (q.now() - lastRefresh >= REPLICA_HEARTBEAT_MS) {
          lastRefresh = q.now();
          void q.refresh().catch(() => undefined);
        }
      }, every);
      q.timer.unref();
    }
    return q;
  }

  onFinal(listener: (job: Job) => void): () => void {
    this.db.finalListeners.add(listener);
    return () => this.db.finalListeners.delete(listener);
  }

  onRecycle(listener: (event: RecycleEvent) => void): () => void {
    this.db.recycleListeners.add(listener);
    return () => this.db.recycleListeners.delete(listener);
  }

  async enqueue(req: EnqueueRequest): Promise<Job> {
    const policy = validateEnqueue(req);
    await this.begin();
    const at = this.now();
    const sub = submission(req, policy, at);
    const queued = submitted({ t: 'enq', job: sub }, this.tableOpts);
    const lane = laneOf(queued, false);
    const taker = await this.wakes.reserveTaker(req.endpointId);
    if (taker) {
      // a worker waits here: the job is stored already taken by it (one statement, one commit)
      const taken = transition(queued, { t: 'take', id: sub.id, worker: taker.workerId, at }, this.tableOpts);
      this.deadlines.noteDue(dueAt(taken));
      try {
        await this.db.call((r) => r.insert(taken, lane, 1, dueAt(taken)));
      } catch (e) {
        taker.slot.fulfil(undefined);
        throw e;
      }
      if (!taker.slot.fulfil([taken])) await this.workers.undeliver([taken]).catch(() => undefined);
      return queued;
    }
    this.deadlines.noteDue(dueAt(queued));
    await this.db.call((r) => r.insert(queued, lane, 0, dueAt(queued)));
    this.wakes.committed({ ...noWakes(), ready: [req.endpointId] });
    return queued;
  }

  // ---- the worker's calls (pg/worker-calls.ts) ----

  take(endpointId: string, workerId: string, opts?: TakeOptions): Promise<Job[]> {
    return this.workers.take(endpointId, workerId, opts);
  }

  progress(jobId: string, workerId: string, output: unknown): Promise<Job> {
    return this.workers.progress(jobId, workerId, output);
  }

  appendStream(jobId: string, workerId: string, chunk: unknown): Promise<void> {
    return this.workers.appendStream(jobId, workerId, chunk);
  }

  complete(jobId: string, workerId: string, result: CompleteRequest): Promise<Job> {
    return this.workers.complete(jobId, workerId, result);
  }

  heartbeat(workerId: string, jobIds: readonly string[]): Promise<HeartbeatResult> {
    return this.workers.heartbeat(workerId, jobIds);
  }

  workerLost(workerId: string, reason: string, jobIds?: readonly string[]): Promise<Job[]> {
    return this.workers.workerLost(workerId, reason, jobIds);
  }

  stopRequests(workerId: string, opts?: WaitOptions): Promise<string[]> {
    return this.workers.stopRequests(workerId, opts);
  }

  // ---- the job side ----

  async readStream(jobId: string, from?: number, opts?: WaitOptions): Promise<StreamRead | undefined> {
    await this.begin();
    const first = await this.chunks(jobId, from);
    if (!first || isFinal(first.status) || first.chunks.length > 0 || (opts?.waitMs ?? 0) <= 0) return first;
    // nothing new on a job still running: wait for a chunk or the final status
    const got = await park<{ read: StreamRead | undefined }>(
      waitOpts(opts),
      async () => {
        const read = await this.chunks(jobId, from);
        return !read || isFinal(read.status) || read.chunks.length > 0 ? { read } : undefined;
      },
      (slot) => this.wakes.streams.add(jobId, slot),
    );
    return got ? got.read : this.db.closed ? undefined : this.chunks(jobId, from);
  }

  private chunks(jobId: string, from: number | undefined): Promise<StreamRead | undefined> {
    return this.db.call((r) => r.readChunks(jobId, from, this.now()));
  }

  async cancel(jobId: string): Promise<Job> {
    await this.begin();
    return this.db.tx(async (c, fx) => {
      const row = await this.db.lockOne(c, jobId);
      const job = row.job;
      if (job.status === 'CANCELLED') return job;
      if (isFinal(job.status)) {
        throw new GpufleetError('INVALID_TRANSITION', `job ${jobId} is ${job.status} and cannot be cancelled`, { fields: { jobId, status: job.status } });
      }
      if (job.status === 'IN_PROGRESS') fx.stops.push({ workerId: job.workerId!, jobId });
      return (await this.db.applyRecs(c, fx, [{ row, rec: { t: 'fin', id: jobId, at: this.now(), status: 'CANCELLED' } }]))[0]!;
    });
  }

  async retry(jobId: string): Promise<Job> {
    await this.begin();
    return this.db.tx(async (c, fx) => {
      const row = await this.db.lockOne(c, jobId);
      const job = row.job;
      if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') {
        throw new GpufleetError('INVALID_TRANSITION', `only FAILED and TIMED_OUT jobs can be retried; job ${jobId} is ${job.status}`, {
          fields: { jobId, status: job.status },
        });
      }
      return (await this.db.applyRecs(c, fx, [{ row, rec: { t: 'rq', id: jobId, at: this.now(), cause: 'retry' } }]))[0]!;
    });
  }

  async purge(endpointId: string): Promise<number> {
    await this.begin();
    return this.db.tx(async (c, fx) => {
      const at = this.now();
      const rows = await this.db.lockMany(c, { endpointId, queuedOnly: true, order: 'lane-seq' });
      await this.db.applyRecs(c, fx, rows.map((row) => ({ row, rec: { t: 'fin', id: row.job.id, at, status: 'CANCELLED' } })));
      return rows.length;
    });
  }

  async deleteEndpoint(endpointId: string): Promise<DeleteEndpointResult> {
    await this.begin();
    return this.db.tx(async (c, fx) => {
      const at = this.now();
      const rows = await this.db.lockMany(c, { endpointId, order: 'seq' });
      let cancelled = 0;
      for (const row of rows) {
        const job = row.job;
        if (isFinal(job.status)) continue;
        if (job.status === 'IN_PROGRESS') fx.stops.push({ workerId: job.workerId!, jobId: job.id });
        const final = transition(job, { t: 'fin', id: job.id, at, status: 'CANCELLED' }, this.tableOpts);
        fx.finals.push(final);
        // the rows go with this commit: a final waiter of this replica woken by it finds the job here
        // (read only when the row is gone, so an aborted commit leaves nothing visible)
        this.removedFinals.set(job.id, final);
        setTimeout(() => this.removedFinals.delete(job.id), REMOVED_FINAL_MS).unref();
        cancelled++;
      }
      // the cancellations and the removal commit together: nothing of the endpoint is left to write
      await c.removeEndpoint(endpointId);
      fx.drops.add(endpointId);
      return { cancelled, removed: rows.length };
    });
  }

  async get(jobId: string): Promise<Job | undefined> {
    await this.begin();
    return this.db.find(jobId);
  }

  async setTtl(jobId: string, ttlMs: number): Promise<Job> {
    const lim = JOB_LIMITS.statusTtl;
    if (!Number.isInteger(ttlMs) || ttlMs < lim.min || ttlMs > lim.max) {
      throw new GpufleetError('VALIDATION_FAILED', `ttl must be an integer number of milliseconds from ${lim.min} to ${lim.max}`, {
        errors: [`$.ttl: must be an integer from ${lim.min} to ${lim.max}`],
      });
    }
    await this.begin();
    return this.db.tx(async (c, fx) => {
      const row = await this.db.lockOne(c, jobId);
      return (await this.db.applyRecs(c, fx, [{ row, rec: { t: 'ttl', id: jobId, at: this.now(), ttl: ttlMs } }]))[0]!;
    });
  }

  async heldBy(workerId: string): Promise<string[]> {
    await this.begin();
    return this.db.call((r) => r.heldBy(workerId));
  }

  async waitForFinal(jobId: string, opts?: WaitOptions): Promise<Job | undefined> {
    await this.begin();
    const job = await this.db.find(jobId);
    if (!job || isFinal(job.status) || (opts?.waitMs ?? 0) <= 0) return job;
    const got = await park<{ job: Job | undefined }>(
      waitOpts(opts),
      async () => {
        const now = (await this.db.find(jobId)) ?? this.removedFinals.get(jobId);
        return !now || isFinal(now.status) ? { job: now } : undefined;
      },
      (slot) => this.wakes.finals.add(jobId, slot),
    );
    return got ? got.job : this.db.closed ? undefined : this.db.find(jobId);
  }

  async counts(endpointId: string): Promise<EndpointCounts> {
    await this.begin();
    return this.db.call((r) => r.counts(endpointId, this.now()));
  }

  async depth(endpointId: string): Promise<QueueDepth> {
    await this.begin();
    const now = this.now();
    const d = await this.db.call((r) => r.depth(endpointId, now, this.replicaId));
    return {
      inQueue: d.inQueue,
      lowPriority: d.lowPriority,
      inProgress: d.inProgress,
      oldestAgeMs: d.oldestQueuedAt === null ? 0 : Math.max(0, now - d.oldestQueuedAt),
      waitingWorkers: d.othersWaiting + this.wakes.takers.count(endpointId),
    };
  }

  /**
   * Webhook deliveries of replicas that stopped, taken over by this one (pg/webhook-outbox.ts); the
   * first call (the sender's start) answers this replica's own pending ones too.
   */
  async pendingWebhooks(): Promise<PendingWebhook[]> {
    const own = !this.webhooksResumed;
    const got = await this.db.tx((c) => c.takePendingWebhooks(this.replicaId, this.now(), own));
    this.webhooksResumed = true;
    return got;
  }

  webhookAttempted(jobId: string, attempts: number, nextAt: number): Promise<void> {
    return this.db.call((r) => r.webhookAttempted(jobId, this.replicaId, attempts, nextAt));
  }

  webhookSettled(jobId: string): Promise<void> {
    return this.db.call((r) => r.webhookSettled(jobId, this.replicaId));
  }

  /** the port's page of retained COMPLETED jobs after `after` in (finishedAt, id) order (public model charges) */
  async completedJobs(endpointId: string, after: CompletedCursor, limit: number): Promise<Job[]> {
    await this.begin();
    return this.db.call((r) => r.completedAfter(endpointId, after, limit, this.now()));
  }

  async listJobs(filter: JobListFilter): Promise<Job[]> {
    await this.begin();
    return this.db.call((r) => r.listJobs(filter, this.now()));
  }

  /** applies every deadline that is due (the interval timer calls this too); replicas each claim other rows */
  sweep(): Promise<void> {
    return this.deadlines.sweep();
  }

  /** why the queue cannot make changes durable now (its database unreachable, or it is closed), for /readyz */
  writeBlocker(): string | null {
    return this.db.writeBlocker();
  }

  /** a write of /readyz's while the database refused one because it cannot write: clears writeBlocker() once it takes writes again */
  probeWrite(): Promise<void> {
    return this.db.probeWrite();
  }

  async close(): Promise<void> {
    if (this.db.closed) return;
    this.db.closed = true;
    clearInterval(this.timer);
    await this.wakes.close();
    await this.rows.leaveReplicas(this.replicaId).catch(() => undefined);
    this.releaseErrors();
  }

  private begin(): Promise<void> {
    return this.deadlines.begin();
  }

  private now(): number {
    return this.db.now();
  }

  /** refreshes this replica's row and drops job-stop requests nobody came for */
  private async refresh(): Promise<void> {
    await this.rows.refreshReplica(this.replicaId, this.now(), this.wakes.waiting());
    await this.rows.pruneStops(this.now() - STOP_KEEP_MS);
  }
}
