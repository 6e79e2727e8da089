// The worker's side of the PostgreSQL queue: take (long poll, SKIP LOCKED), progress, stream chunks,
// the final report, lease renewals, job-stop polls, and a worker given up for lost. A job is
// completed at most once: the common report is one conditional UPDATE (the store's finishHeld, store/pg/jobs/statements.ts), anything else
// locks the row and writes under its status and lease token (queue-db.ts).
import { GpufleetError } from '../../../model/index.ts';
import { JOB_LIMITS, type Job, type Retention } from '../../../model/index.ts';
import type { CompleteRequest, HeartbeatResult, TakeOptions, WaitOptions } from '../job-queue.ts';
import type { LogRecord } from '../log-record.ts';
import type { DeadlineSweeper } from './deadline-sweeper.ts';
import { lostRecord } from './deadlines.ts';
import { newEffects } from './effects.ts';
import { park, waitOpts } from './parking.ts';
import { held, leaseLost, notFound, type QueueDb } from './queue-db.ts';
import { noWakes, type Wakeups } from './wakeups.ts';

export interface WorkerRules {
  leaseMs: number;
  maxLostRetries: number;
  maxErrorRetries: number;
  retention: Retention;
}

export class WorkerCalls {
  constructor(
    private readonly db: QueueDb,
    private readonly wakes: Wakeups,
    private readonly deadlines: DeadlineSweeper,
    private readonly rules: WorkerRules,
  ) {}

  async take(endpointId: string, workerId: string, opts: TakeOptions = {}): Promise<Job[]> {
    const max = opts.max ?? 1;
    if (!Number.isInteger(max) || max < 1) {
      throw new GpufleetError('VALIDATION_FAILED', 'max must be a positive integer', { errors: ['$.max: must be an integer >= 1'] });
    }
    await this.deadlines.begin();
    const got = await park<Job[]>(
      { ...waitOpts(opts), onLate: (jobs) => this.undeliver(jobs) },
      () => this.claim(endpointId, workerId, max),
      (slot) => this.wakes.takers.add(endpointId, { workerId, slot }),
    );
    // a full batch: more may be queued for the next waiter
    if (got?.length === max) this.wakes.wakeTakers(endpointId);
    return got ?? [];
  }

  private async claim(endpointId: string, workerId: string, max: number): Promise<Job[] | undefined> {
    const at = this.db.now();
    this.deadlines.noteDue(at + Math.min(this.rules.leaseMs, JOB_LIMITS.executionTimeout.min)); // the soonest its deadline can be
    const jobs = await this.db.call((r) => r.claim(endpointId, workerId, max, at, this.rules.leaseMs));
    return jobs.length > 0 ? jobs : undefined;
  }

  /** taken jobs whose taker went away before it got them: back to the queue, no retry counted */
  async undeliver(jobs: Job[]): Promise<void> {
    await this.db.tx(async (c, fx) => {
      const rows = await this.db.lockMany(c, { ids: jobs.map((j) => j.id) });
      const items = rows
        .filter((r) => jobs.some((j) => j.id === r.job.id && r.job.status === 'IN_PROGRESS' && r.job.workerId === j.workerId && r.job.startedAt === j.startedAt))
        .map((row) => ({ row, rec: { t: 'rq', id: row.job.id, at: this.db.now(), cause: 'undelivered' } as LogRecord }));
      await this.db.applyRecs(c, fx, items);
    });
  }

  async progress(jobId: string, workerId: string, output: unknown): Promise<Job> {
    await this.deadlines.begin();
    return this.db.tx(async (c, fx) => {
      const row = await this.db.lockOne(c, jobId);
      held(row.job, workerId);
      return (await this.db.applyRecs(c, fx, [{ row, rec: { t: 'prog', id: jobId, at: this.db.now(), output } }]))[0]!;
    });
  }

  async appendStream(jobId: string, workerId: string, chunk: unknown): Promise<void> {
    await this.deadlines.begin();
    if (await this.db.call((r) => r.appendChunk(jobId, workerId, chunk, this.db.now() + this.rules.leaseMs))) {
      this.wakes.committed({ ...noWakes(), chunk: [jobId] });
      return;
    }
    const job = await this.db.find(jobId);
    if (!job) throw notFound(jobId);
    held(job, workerId);
    throw leaseLost(jobId, workerId, job);
  }

  async complete(jobId: string, workerId: string, result: CompleteRequest): Promise<Job> {
    await this.deadlines.begin();
    const fast = result.error === undefined || this.rules.maxErrorRetries === 0 ? await this.finishHeld(jobId, workerId, result) : undefined;
    if (fast) return fast;
    return this.db.tx(async (c, fx) => {
      const row = await this.db.lockOne(c, jobId);
      const job = held(row.job, workerId);
      const at = this.db.now();
      const rec: LogRecord = result.error !== undefined && job.autoRetries < this.rules.maxErrorRetries
        ? { t: 'rq', id: jobId, at, cause: 'error', error: result.error }
        : {
          t: 'fin', id: jobId, at, status: result.error !== undefined ? 'FAILED' : 'COMPLETED',
          ...(result.output !== undefined ? { output: result.output } : {}),
          ...(result.error !== undefined ? { error: result.error } : {}),
        };
      return (await this.db.applyRecs(c, fx, [{ row, rec }]))[0]!;
    });
  }

  /** the common final report in one statement (store/pg/jobs/statements.ts); undefined: the transaction path decides */
  private async finishHeld(jobId: string, workerId: string, result: CompleteRequest): Promise<Job | undefined> {
    const at = this.db.now();
    const { syncMs, asyncMs } = this.rules.retention;
    this.deadlines.noteDue(at + Math.min(syncMs, asyncMs, JOB_LIMITS.syncRetention));
    const job = await this.db.call((r) => r.finishHeld(jobId, workerId, result, at, this.rules.retention));
    if (!job) return undefined;
    const fx = newEffects();
    fx.finals.push(job);
    this.db.publish(fx);
    return job;
  }

  async heartbeat(workerId: string, jobIds: readonly string[]): Promise<HeartbeatResult> {
    // the sweep runs first: a lease that already ran out is lost, not renewed
    await this.deadlines.begin();
    if (jobIds.length === 0) return { renewed: [], notHeld: [] };
    const now = this.db.now();
    const ok = await this.db.call((r) => r.renewLeases(workerId, jobIds, now + this.rules.leaseMs, now));
    return { renewed: jobIds.filter((id) => ok.has(id)), notHeld: jobIds.filter((id) => !ok.has(id)) };
  }

  async workerLost(workerId: string, reason: string, jobIds?: readonly string[]): Promise<Job[]> {
    await this.deadlines.begin();
    return this.db.tx(async (c, fx) => {
      const now = this.db.now();
      const only = jobIds ? new Set(jobIds) : null;
      const rows = (await this.db.lockMany(c, { runningWorker: workerId })).filter((r) => !only || only.has(r.job.id));
      // not told to stop them (as on the embedded queue): it said it has none, and the same worker may
      // take one of them again, a new attempt that a stop request left behind would end
      const items = rows.map((row) => ({ row, rec: lostRecord(row.job, reason, now, fx, false, this.rules.maxLostRetries) }));
      const jobs = await this.db.applyRecs(c, fx, items);
      if (!only) fx.lost.add(workerId);
      return jobs;
    });
  }

  async stopRequests(workerId: string, opts?: WaitOptions): Promise<string[]> {
    if (this.db.closed) return [];
    const got = await park<string[]>(
      // a poll that went away after it took them: they are put back for the next
      { ...waitOpts(opts), onLate: (ids) => this.restoreStops(workerId, ids) },
      async () => {
        const ids = await this.db.call((r) => r.takeStops(workerId));
        return ids.length > 0 ? ids : undefined;
      },
      (slot) => this.wakes.stops.add(workerId, slot),
    );
    return got ?? [];
  }

  private async restoreStops(workerId: string, ids: string[]): Promise<void> {
    await this.db.call((r) => r.restoreStops(workerId, ids, this.db.now()));
  }
}
