// The JobQueue in PostgreSQL, for several control-plane replicas on one database (docs/postgres-queue.md).
// Same observable behaviour as the embedded queue: each change is computed by the embedded queue's
// own JobTable from the same records and written under the row's lock, conditionally on the status
// and lease token read. Takes and the deadline sweep claim rows with FOR UPDATE SKIP LOCKED, so
// replicas never hand out one job twice nor fight over the same deadline. Dispatch is push: a worker
// parked in take on this replica is handed a job by the enqueue itself (one INSERT, already taken);
// other replicas are woken by a NOTIFY sent right after the commit.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { GpufleetError } from '../../model/index.ts';
import { isFinal, JOB_LIMITS, type EnqueueRequest, type Job, type Retention } from './job.ts';
import type {
  CompleteRequest, DeleteEndpointResult, EndpointCounts, HeartbeatResult, JobQueue, PendingWebhook, QueueDepth, RecycleEvent, StreamRead, TakeOptions, WaitOptions,
} from './job-queue.ts';
import type { LogRecord } from './log-record.ts';
import { submission, validateEnqueue } from './job-validation.ts';
import { DEFAULT_LEASE_MS, type QueueRuleOptions } from './queue-options.ts';
import { newEffects, queueError, wakesOf, type Effects } from './pg/effects.ts';
import { dueAt, fromRow, INSERT_JOB, insertParams, JOB_COLUMNS, laneOf, submitted, transition, visible, writeJobs, type JobRow, type JobRowData, type RowWrite } from './pg/job-row.ts';
import { park } from './pg/parking.ts';
import { joinReplicas, leaveReplicas, refreshReplica, REPLICA_HEARTBEAT_MS } from './pg/replicas.ts';
import { ensureJobSchema } from './pg/schema.ts';
import { dueWork, lostRecord } from './pg/deadlines.ts';
import { inTransaction } from './pg/transaction.ts';
import { queueWebhooks, takePendingWebhooks, webhookAttempted, webhookSettled } from './pg/webhook-outbox.ts';
import { appendChunk, claimJobs, countJobs, depthOf, finishHeldJob, readChunks, renewLeases, type Query } from './pg/statements.ts';
import { noWakes, Wakeups } from './pg/wakeups.ts';

export interface PostgresJobQueueOptions extends QueueRuleOptions {
  /**
   * this replica's name in gpufleet_job_replicas, the same across its restarts (its pending webhook
   * deliveries are resumed by it at once; another replica takes them over only once it looks dead);
   * default a random one
   */
  replicaId?: string;
}

/** rows a sweep transaction claims at most */
const SWEEP_BATCH = 200;
/** job-stop requests no worker came for are dropped after a day */
const STOP_KEEP_MS = 86_400_000;
/** how long a job cancelled by its endpoint's deletion stays readable to this replica's final waiters */
const REMOVED_FINAL_MS = 5_000;

function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // a listener's failure is its own; the change is already committed
  }
}

export class PostgresJobQueue implements JobQueue {
  readonly replicaId: string;
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly maxLostRetries: number;
  private readonly maxErrorRetries: number;
  private readonly tableOpts: { leaseMs: number; retention: Retention };
  private readonly wakes: Wakeups;
  private readonly finalListeners = new Set<(job: Job) => void>();
  private readonly recycleListeners = new Set<(e: RecycleEvent) => void>();
  /** jobs whose rows an endpoint's deletion removed, as they ended (waitForFinal) */
  private readonly removedFinals = new Map<string, Job>();
  private readonly onPoolError = (): void => undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweptAt = Number.NEGATIVE_INFINITY;
  /**
   * No row is due before this, as far as this replica knows: the last probe's earliest due_at, but
   * at most `minGapMs` after it (a deadline made since by another replica is never sooner than that),
   * lowered by every deadline this replica writes. Operations sweep first only once it has passed.
   */
  private nextDue = Number.NEGATIVE_INFINITY;
  private readonly minGapMs: number;
  private sweeping: Promise<void> | null = null;
  private closed = false;
  /** the last connection failure, until a statement succeeds again (writeBlocker) */
  private unreachable: string | null = null;

  private constructor(private readonly pool: pg.Pool, opts: PostgresJobQueueOptions) {
    this.replicaId = opts.replicaId ?? `replica-${randomUUID()}`;
    this.clock = opts.clock ?? Date.now;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxLostRetries = opts.maxLostRetries ?? 3;
    this.maxErrorRetries = opts.maxErrorRetries ?? 0;
    this.tableOpts = {
      leaseMs: this.leaseMs,
      retention: { asyncMs: opts.retention?.asyncMs ?? JOB_LIMITS.asyncRetention, syncMs: opts.retention?.syncMs ?? JOB_LIMITS.syncRetention },
    };
    // the soonest deadline a write can make: a lease, a result's retention, a status ?ttl (1 s at least)
    this.minGapMs = Math.min(JOB_LIMITS.statusTtl.min, this.leaseMs, this.tableOpts.retention.asyncMs, this.tableOpts.retention.syncMs);
    this.wakes = new Wakeups(pool, this.replicaId);
    // an idle client of the pool losing its connection must not end the process
    pool.on('error', this.onPoolError);
  }

  /** creates the tables if needed, starts listening and joins the replicas; `pool` stays the caller's */
  static async open(pool: pg.Pool, opts: PostgresJobQueueOptions = {}): Promise<PostgresJobQueue> {
    const q = new PostgresJobQueue(pool, opts);
    try {
      await ensureJobSchema(pool);
      await q.wakes.start();
      await joinReplicas(pool, q.replicaId, q.now(), q.leaseMs);
    } catch (e) {
      await q.close().catch(() => undefined);
      throw queueError(e);
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
    this.finalListeners.add(listener);
    return () => this.finalListeners.delete(listener);
  }

  onRecycle(listener: (event: RecycleEvent) => void): () => void {
    this.recycleListeners.add(listener);
    return () => this.recycleListeners.delete(listener);
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
      this.noteDue(dueAt(taken));
      try {
        await this.query(INSERT_JOB, insertParams(taken, lane, 1));
      } catch (e) {
        taker.slot.fulfil(undefined);
        throw e;
      }
      if (!taker.slot.fulfil([taken])) await this.undeliver([taken]).catch(() => undefined);
      return queued;
    }
    this.noteDue(dueAt(queued));
    await this.query(INSERT_JOB, insertParams(queued, lane, 0));
    this.wakes.committed({ ...noWakes(), ready: [req.endpointId] });
    return queued;
  }

  async take(endpointId: string, workerId: string, opts: TakeOptions = {}): Promise<Job[]> {
    const max = opts.max ?? 1;
    if (!Number.isInteger(max) || max < 1) {
      throw new GpufleetError('VALIDATION_FAILED', 'max must be a positive integer', { errors: ['$.max: must be an integer >= 1'] });
    }
    await this.begin();
    const got = await park<Job[]>(
      { ...this.waitOpts(opts), onLate: (jobs) => this.undeliver(jobs) },
      () => this.claim(endpointId, workerId, max),
      (slot) => this.wakes.takers.add(endpointId, { workerId, slot }),
    );
    // a full batch: more may be queued for the next waiter
    if (got?.length === max) this.wakes.wakeTakers(endpointId);
    return got ?? [];
  }

  private async claim(endpointId: string, workerId: string, max: number): Promise<Job[] | undefined> {
    const at = this.now();
    this.noteDue(at + Math.min(this.leaseMs, JOB_LIMITS.executionTimeout.min)); // the soonest its deadline can be
    const jobs = await claimJobs(this.q, endpointId, workerId, max, at, this.leaseMs);
    return jobs.length > 0 ? jobs : undefined;
  }

  /** taken jobs whose taker went away before it got them: back to the queue, no retry counted */
  private async undeliver(jobs: Job[]): Promise<void> {
    await this.tx(async (c, fx) => {
      const rows = await this.lockMany(c, 'id = ANY($1)', [jobs.map((j) => j.id)]);
      const items = rows
        .filter((r) => jobs.some((j) => j.id === r.job.id && r.job.status === 'IN_PROGRESS' && r.job.workerId === j.workerId && r.job.startedAt === j.startedAt))
        .map((row) => ({ row, rec: { t: 'rq', id: row.job.id, at: this.now(), cause: 'undelivered' } as LogRecord }));
      await this.applyRecs(c, fx, items);
    });
  }

  async progress(jobId: string, workerId: string, output: unknown): Promise<Job> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const row = await this.lockOne(c, jobId);
      this.held(row.job, workerId);
      return (await this.applyRecs(c, fx, [{ row, rec: { t: 'prog', id: jobId, at: this.now(), output } }]))[0]!;
    });
  }

  async appendStream(jobId: string, workerId: string, chunk: unknown): Promise<void> {
    await this.begin();
    if (await appendChunk(this.q, jobId, workerId, chunk, this.now() + this.leaseMs)) {
      this.wakes.committed({ ...noWakes(), chunk: [jobId] });
      return;
    }
    const job = await this.find(jobId);
    if (!job) throw notFound(jobId);
    this.held(job, workerId);
    throw leaseLost(jobId, workerId, job);
  }

  async readStream(jobId: string, from?: number, opts?: WaitOptions): Promise<StreamRead | undefined> {
    await this.begin();
    const first = await readChunks(this.q, jobId, from, this.now());
    if (!first || isFinal(first.status) || first.chunks.length > 0 || (opts?.waitMs ?? 0) <= 0) return first;
    // nothing new on a job still running: wait for a chunk or the final status
    const got = await park<{ read: StreamRead | undefined }>(
      this.waitOpts(opts),
      async () => {
        const read = await readChunks(this.q, jobId, from, this.now());
        return !read || isFinal(read.status) || read.chunks.length > 0 ? { read } : undefined;
      },
      (slot) => this.wakes.streams.add(jobId, slot),
    );
    return got ? got.read : this.closed ? undefined : readChunks(this.q, jobId, from, this.now());
  }

  async complete(jobId: string, workerId: string, result: CompleteRequest): Promise<Job> {
    await this.begin();
    const fast = result.error === undefined || this.maxErrorRetries === 0 ? await this.finishHeld(jobId, workerId, result) : undefined;
    if (fast) return fast;
    return this.tx(async (c, fx) => {
      const row = await this.lockOne(c, jobId);
      const held = this.held(row.job, workerId);
      const at = this.now();
      const rec: LogRecord = result.error !== undefined && held.autoRetries < this.maxErrorRetries
        ? { t: 'rq', id: jobId, at, cause: 'error', error: result.error }
        : {
          t: 'fin', id: jobId, at, status: result.error !== undefined ? 'FAILED' : 'COMPLETED',
          ...(result.output !== undefined ? { output: result.output } : {}),
          ...(result.error !== undefined ? { error: result.error } : {}),
        };
      return (await this.applyRecs(c, fx, [{ row, rec }]))[0]!;
    });
  }

  /** the common final report in one statement (statements.ts); undefined: the transaction path decides */
  private async finishHeld(jobId: string, workerId: string, result: CompleteRequest): Promise<Job | undefined> {
    const at = this.now();
    const { syncMs, asyncMs } = this.tableOpts.retention;
    this.noteDue(at + Math.min(syncMs, asyncMs, JOB_LIMITS.syncRetention));
    const job = await finishHeldJob(this.q, jobId, workerId, result, at, this.tableOpts.retention);
    if (!job) return undefined;
    const fx = newEffects();
    fx.finals.push(job);
    this.publish(fx);
    return job;
  }

  async heartbeat(workerId: string, jobIds: readonly string[]): Promise<HeartbeatResult> {
    // the sweep runs first: a lease that already ran out is lost, not renewed
    await this.begin();
    if (jobIds.length === 0) return { renewed: [], notHeld: [] };
    const now = this.now();
    const ok = await renewLeases(this.q, workerId, jobIds, now + this.leaseMs, now);
    return { renewed: jobIds.filter((id) => ok.has(id)), notHeld: jobIds.filter((id) => !ok.has(id)) };
  }

  async workerLost(workerId: string, reason: string, jobIds?: readonly string[]): Promise<Job[]> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const now = this.now();
      const only = jobIds ? new Set(jobIds) : null;
      const rows = (await this.lockMany(c, `worker_id = $1 AND status = 'IN_PROGRESS'`, [workerId], 'started_at, lane, seq')).filter((r) => !only || only.has(r.job.id));
      // a worker that lives on is told to stop them, in case it still runs one
      const items = rows.map((row) => ({ row, rec: this.lose(row.job, reason, now, fx, only !== null) }));
      const jobs = await this.applyRecs(c, fx, items);
      if (!only) fx.lost.add(workerId);
      return jobs;
    });
  }

  async cancel(jobId: string): Promise<Job> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const row = await this.lockOne(c, jobId);
      const job = row.job;
      if (job.status === 'CANCELLED') return job;
      if (isFinal(job.status)) {
        throw new GpufleetError('INVALID_TRANSITION', `job ${jobId} is ${job.status} and cannot be cancelled`, { fields: { jobId, status: job.status } });
      }
      if (job.status === 'IN_PROGRESS') fx.stops.push({ workerId: job.workerId!, jobId });
      return (await this.applyRecs(c, fx, [{ row, rec: { t: 'fin', id: jobId, at: this.now(), status: 'CANCELLED' } }]))[0]!;
    });
  }

  async retry(jobId: string): Promise<Job> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const row = await this.lockOne(c, jobId);
      const job = row.job;
      if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') {
        throw new GpufleetError('INVALID_TRANSITION', `only FAILED and TIMED_OUT jobs can be retried; job ${jobId} is ${job.status}`, {
          fields: { jobId, status: job.status },
        });
      }
      return (await this.applyRecs(c, fx, [{ row, rec: { t: 'rq', id: jobId, at: this.now(), cause: 'retry' } }]))[0]!;
    });
  }

  async purge(endpointId: string): Promise<number> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const at = this.now();
      const rows = await this.lockMany(c, `endpoint_id = $1 AND status = 'IN_QUEUE'`, [endpointId], 'lane, seq');
      await this.applyRecs(c, fx, rows.map((row) => ({ row, rec: { t: 'fin', id: row.job.id, at, status: 'CANCELLED' } })));
      return rows.length;
    });
  }

  async deleteEndpoint(endpointId: string): Promise<DeleteEndpointResult> {
    await this.begin();
    return this.tx(async (c, fx) => {
      const at = this.now();
      const rows = await this.lockMany(c, 'endpoint_id = $1', [endpointId], 'seq');
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
      await c.query('DELETE FROM gpufleet_jobs WHERE endpoint_id = $1', [endpointId]);
      fx.drops.add(endpointId);
      return { cancelled, removed: rows.length };
    });
  }

  async get(jobId: string): Promise<Job | undefined> {
    await this.begin();
    return this.find(jobId);
  }

  async setTtl(jobId: string, ttlMs: number): Promise<Job> {
    const lim = JOB_LIMITS.statusTtl;
    if (!Number.isInteger(ttlMs) || ttlMs < lim.min || ttlMs > lim.max) {
      throw new GpufleetError('VALIDATION_FAILED', `ttl must be an integer number of milliseconds from ${lim.min} to ${lim.max}`, {
        errors: [`$.ttl: must be an integer from ${lim.min} to ${lim.max}`],
      });
    }
    await this.begin();
    return this.tx(async (c, fx) => {
      const row = await this.lockOne(c, jobId);
      return (await this.applyRecs(c, fx, [{ row, rec: { t: 'ttl', id: jobId, at: this.now(), ttl: ttlMs } }]))[0]!;
    });
  }

  async heldBy(workerId: string): Promise<string[]> {
    await this.begin();
    const { rows } = await this.query<{ id: string }>(
      `SELECT id FROM gpufleet_jobs WHERE worker_id = $1 AND status = 'IN_PROGRESS' ORDER BY started_at, lane, seq`,
      [workerId],
    );
    return rows.map((r) => r.id);
  }

  async waitForFinal(jobId: string, opts?: WaitOptions): Promise<Job | undefined> {
    await this.begin();
    const job = await this.find(jobId);
    if (!job || isFinal(job.status) || (opts?.waitMs ?? 0) <= 0) return job;
    const got = await park<{ job: Job | undefined }>(
      this.waitOpts(opts),
      async () => {
        const now = (await this.find(jobId)) ?? this.removedFinals.get(jobId);
        return !now || isFinal(now.status) ? { job: now } : undefined;
      },
      (slot) => this.wakes.finals.add(jobId, slot),
    );
    return got ? got.job : this.closed ? undefined : this.find(jobId);
  }

  async stopRequests(workerId: string, opts?: WaitOptions): Promise<string[]> {
    if (this.closed) return [];
    const got = await park<string[]>(
      // a poll that went away after it took them: they are put back for the next
      { ...this.waitOpts(opts), onLate: (ids) => this.restoreStops(workerId, ids) },
      async () => {
        const { rows } = await this.query<{ job_id: string }>('DELETE FROM gpufleet_job_stops WHERE worker_id = $1 RETURNING job_id, at', [workerId]);
        return rows.length > 0 ? rows.map((r) => r.job_id) : undefined;
      },
      (slot) => this.wakes.stops.add(workerId, slot),
    );
    return got ?? [];
  }

  private async restoreStops(workerId: string, ids: string[]): Promise<void> {
    await this.query(
      'INSERT INTO gpufleet_job_stops (worker_id, job_id, at) SELECT $1, j, $3 FROM unnest($2::text[]) AS j ON CONFLICT DO NOTHING',
      [workerId, ids, this.now()],
    );
  }

  async counts(endpointId: string): Promise<EndpointCounts> {
    await this.begin();
    return countJobs(this.q, endpointId, this.now());
  }

  async depth(endpointId: string): Promise<QueueDepth> {
    await this.begin();
    const d = await depthOf(this.q, endpointId, this.now(), this.replicaId);
    return { ...d, waitingWorkers: d.waitingWorkers + this.wakes.takers.count(endpointId) };
  }

  /** webhook deliveries pending on this replica, and those of replicas not seen for a while (pg/webhook-outbox.ts) */
  pendingWebhooks(): Promise<PendingWebhook[]> {
    return takePendingWebhooks(this.q, this.replicaId, this.now());
  }

  webhookAttempted(jobId: string, attempts: number, nextAt: number): Promise<void> {
    return webhookAttempted(this.q, jobId, attempts, nextAt);
  }

  webhookSettled(jobId: string): Promise<void> {
    return webhookSettled(this.q, jobId);
  }

  /** applies every deadline that is due (the interval timer calls this too); replicas each claim other rows */
  sweep(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    this.sweptAt = this.now();
    const run = this.sweepDue(this.sweptAt).finally(() => {
      if (this.sweeping === run) this.sweeping = null;
    });
    this.sweeping = run;
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.wakes.close();
    await leaveReplicas(this.pool, this.replicaId).catch(() => undefined);
    this.pool.removeListener('error', this.onPoolError);
  }

  // ---- internals ----

  private now(): number {
    return this.clock();
  }

  private waitOpts(opts: WaitOptions | undefined): WaitOptions {
    return { waitMs: opts?.waitMs ?? 0, ...(opts?.signal ? { signal: opts.signal } : {}) };
  }

  /** every operation starts here: due deadlines first (once per tick of the clock, shared by concurrent callers) */
  private begin(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    const now = this.now();
    if (now <= this.sweptAt || now < this.nextDue) return this.sweeping ?? Promise.resolve();
    return this.sweep();
  }

  private async sweepDue(now: number): Promise<void> {
    const probe = await this.query<{ m: string | null }>('SELECT min(due_at) AS m FROM gpufleet_jobs', []);
    const soonest = probe.rows[0]?.m == null ? Number.POSITIVE_INFINITY : Number(probe.rows[0].m);
    if (soonest > now) {
      this.nextDue = Math.min(soonest, now + this.minGapMs);
      return;
    }
    this.nextDue = Number.NEGATIVE_INFINITY; // swept now: the next operation looks again
    for (;;) {
      const claimed = await this.tx(async (c, fx) => {
        const { rows } = await c.query<JobRowData>(
          `SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE due_at <= $1 ORDER BY due_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED`,
          [now],
        );
        const { items, gone, stale } = dueWork(rows.map(fromRow), now, { table: this.tableOpts, maxLostRetries: this.maxLostRetries }, fx);
        await this.applyRecs(c, fx, items);
        for (const w of stale) this.noteDue(dueAt(w.after));
        await writeJobs(c, stale);
        if (gone.length > 0) await c.query('DELETE FROM gpufleet_jobs WHERE id = ANY($1)', [gone]);
        return rows.length;
      });
      if (claimed < SWEEP_BATCH) return;
    }
  }

  /** a deadline this replica is about to write */
  private noteDue(at: number | null): void {
    if (at !== null && at < this.nextDue) this.nextDue = at;
  }

  /** refreshes this replica's row and drops job-stop requests nobody came for */
  private async refresh(): Promise<void> {
    await refreshReplica(this.pool, this.replicaId, this.now(), this.wakes.waiting());
    await this.query('DELETE FROM gpufleet_job_stops WHERE at < $1', [this.now() - STOP_KEEP_MS]);
  }

  private lose(job: Job, reason: string, now: number, fx: Effects, tellWorker: boolean): LogRecord {
    return lostRecord(job, reason, now, fx, tellWorker, this.maxLostRetries);
  }

  /** computes each record's change with the embedded queue's table and writes them, under the rows' locks */
  private async applyRecs(c: pg.PoolClient, fx: Effects, items: { row: JobRow; rec: LogRecord }[]): Promise<Job[]> {
    const out: Job[] = [];
    const writes: RowWrite[] = [];
    for (const { row, rec } of items) {
      const after = transition(row.job, rec, this.tableOpts);
      out.push(after);
      if (after === row.job) continue;
      const entered = after.status === 'IN_QUEUE' && row.job.status !== 'IN_QUEUE';
      writes.push({ before: row, after, ...(entered ? { lane: laneOf(after, rec.t === 'rq' && rec.cause !== 'retry') } : {}) });
      if (isFinal(after.status) && !isFinal(row.job.status)) fx.finals.push(after);
      if (entered) fx.ready.add(after.endpointId);
    }
    const entering = writes.filter((w) => w.lane !== undefined);
    if (entering.length > 0) {
      // new places at the back of their lanes, in this order
      const { rows } = await c.query<{ s: string }>(`SELECT nextval('gpufleet_job_seq')::text AS s FROM generate_series(1, $1)`, [entering.length]);
      entering.forEach((w, i) => (w.seq = Number(rows[i]!.s)));
    }
    for (const w of writes) this.noteDue(dueAt(w.after));
    await writeJobs(c, writes);
    return out;
  }

  private async find(jobId: string): Promise<Job | undefined> {
    const { rows } = await this.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE id = $1`, [jobId]);
    const job = rows[0] ? fromRow(rows[0]).job : undefined;
    return job && visible(job, this.now()) ? job : undefined;
  }

  private async lockOne(c: pg.PoolClient, jobId: string): Promise<JobRow> {
    const { rows } = await c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE id = $1 FOR UPDATE`, [jobId]);
    const row = rows[0] ? fromRow(rows[0]) : undefined;
    if (!row || !visible(row.job, this.now())) throw notFound(jobId);
    return row;
  }

  private async lockMany(c: pg.PoolClient, where: string, params: unknown[], order = 'seq'): Promise<JobRow[]> {
    const { rows } = await c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE ${where} ORDER BY ${order} FOR UPDATE`, params);
    const now = this.now();
    return rows.map(fromRow).filter((r) => visible(r.job, now));
  }

  /** the job, if `workerId` holds it IN_PROGRESS; otherwise why not, as an error */
  private held(job: Job, workerId: string): Job {
    if (isFinal(job.status)) {
      throw new GpufleetError('JOB_ALREADY_FINAL', `job ${job.id} is already ${job.status}`, { fields: { jobId: job.id, status: job.status, workerId: job.workerId } });
    }
    if (job.status !== 'IN_PROGRESS' || job.workerId !== workerId) throw leaseLost(job.id, workerId, job);
    return job;
  }

  private readonly q: Query = (sql, params) => this.query(sql, params);

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      const r = await this.pool.query<R>(sql, params);
      this.unreachable = null;
      return r;
    } catch (e) {
      throw this.failed(e);
    }
  }

  /** a failure as callers see it; an unreachable database is remembered for /readyz until a statement succeeds */
  private failed(e: unknown): unknown {
    const out = queueError(e);
    if (out instanceof GpufleetError && out.code === 'STORE_UNAVAILABLE') this.unreachable = String(out.fields.reason ?? out.message);
    return out;
  }

  /** why the queue cannot make changes durable now (its database unreachable, or it is closed), for /readyz */
  writeBlocker(): string | null {
    if (this.closed) return 'the job queue is closed';
    return this.unreachable === null ? null : `the job queue's database is unreachable: ${this.unreachable}`;
  }

  /** one transaction; its job-stop and webhook rows commit with it; parked callers and listeners are told after */
  private async tx<T>(fn: (c: pg.PoolClient, fx: Effects) => Promise<T>): Promise<T> {
    const fx = newEffects();
    const out = await this.txRun(fn, fx).catch((e: unknown) => Promise.reject(this.failed(e)));
    this.publish(fx);
    return out;
  }

  private txRun<T>(fn: (c: pg.PoolClient, fx: Effects) => Promise<T>, fx: Effects): Promise<T> {
    return inTransaction(this.pool, async (c) => {
      this.unreachable = null;
      const out = await fn(c, fx);
      if (fx.stops.length > 0) {
        await c.query(
          'INSERT INTO gpufleet_job_stops (worker_id, job_id, at) SELECT w, j, $3 FROM unnest($1::text[], $2::text[]) AS s(w, j) ON CONFLICT DO NOTHING',
          [fx.stops.map((s) => s.workerId), fx.stops.map((s) => s.jobId), this.now()],
        );
      }
      if (fx.lost.size > 0) await c.query('DELETE FROM gpufleet_job_stops WHERE worker_id = ANY($1)', [[...fx.lost]]);
      // a final job's webhook delivery is pending from the same commit on (this replica sends it: onFinal)
      await queueWebhooks(c, fx.finals, this.now(), this.replicaId);
      return out;
    });
  }

  /** after a commit: parked callers here, then (by NOTIFY) on the other replicas, then the listeners */
  private publish(fx: Effects): void {
    this.wakes.committed(wakesOf(fx));
    for (const job of fx.finals) for (const l of this.finalListeners) guard(() => l(job));
    for (const e of fx.recycles) for (const l of this.recycleListeners) guard(() => l(e));
  }
}

function closedError(): GpufleetError {
  return new GpufleetError('INTERNAL', 'the job queue is closed');
}

function notFound(jobId: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `job ${jobId} not found`, { fields: { jobId } });
}

function leaseLost(jobId: string, workerId: string, job: Job): GpufleetError {
  return new GpufleetError('JOB_LEASE_LOST', `worker ${workerId} does not hold job ${jobId} (it is ${job.status})`, {
    fields: { jobId, status: job.status, workerId: job.workerId },
  });
}

