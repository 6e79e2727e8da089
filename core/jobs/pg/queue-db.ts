// The PostgreSQL queue's hold on its rows (through the store's port, store/base/job-rows.ts):
// calls that remember the database's failures for /readyz, transactions that carry their job-stop and
// webhook-outbox rows with them, rows read and locked, each change computed by the embedded queue's
// JobTable (job-rules.ts) and written conditionally, and, after a commit, what it sets off: parked
// callers woken here and on the other replicas (wakeups.ts), then this replica's onFinal and
// onRecycle listeners. Every part of the queue (postgres-queue.ts, worker-calls.ts,
// deadline-sweeper.ts) changes jobs through this.
import { GpufleetError } from '../../../model/index.ts';
import { type JobRow, type JobRows, type JobRowsTx, type RowsToLock, type RowWrite } from '../../../store/index.ts';
import { isFinal, type Job } from '../../../model/index.ts';
import type { TableOptions } from '../job-table.ts';
import type { RecycleEvent } from '../job-queue.ts';
import type { LogRecord } from '../log-record.ts';
import { newEffects, wakesOf, type Effects } from './effects.ts';
import { dueAt, laneOf, transition, visible } from './job-rules.ts';
import type { Wakeups } from './wakeups.ts';

export interface QueueDbOptions {
  replicaId: string;
  clock: () => number;
  table: TableOptions;
  wakes: Wakeups;
  /** a deadline about to be written by this replica (the sweeper looks no later than that) */
  noteDue: (at: number | null) => void;
}

/** a record to apply to a row read under its lock */
export interface RowChange {
  row: JobRow;
  rec: LogRecord;
}

function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // a listener's failure is its own; the change is already committed
  }
}

export class QueueDb {
  readonly finalListeners = new Set<(job: Job) => void>();
  readonly recycleListeners = new Set<(e: RecycleEvent) => void>();
  /** set once by the queue's close: every operation is refused from then on */
  closed = false;
  /** the last connection failure, until a statement succeeds again (writeBlocker) */
  private unreachable: string | null = null;
  /** the server's last refusal of a write because it cannot write (a full disk…), until probeWrite() succeeds */
  private unwritable: string | null = null;

  constructor(readonly rows: JobRows, private readonly opts: QueueDbOptions) {}

  now(): number {
    return this.opts.clock();
  }

  /** one call of the port outside a transaction: a success clears an unreachable database */
  async call<T>(fn: (rows: JobRows) => Promise<T>): Promise<T> {
    try {
      const r = await fn(this.rows);
      this.unreachable = null;
      return r;
    } catch (e) {
      throw this.failed(e);
    }
  }

  /**
   * a failure as callers see it; an unreachable database is remembered for /readyz until a statement
   * succeeds, one that cannot write until probeWrite() succeeds (a statement that passes may have
   * written nothing, so it proves nothing)
   */
  private failed(e: unknown): unknown {
    const f = this.rows.failure(e);
    if (f.unwritable !== undefined) this.unwritable = f.unwritable;
    if (f.unreachable !== undefined) this.unreachable = f.unreachable;
    return f.error;
  }

  /** why the queue cannot make changes durable now (its database unreachable, or it is closed), for /readyz */
  writeBlocker(): string | null {
    if (this.closed) return 'the job queue is closed';
    if (this.unreachable !== null) return `the job queue's database is unreachable: ${this.unreachable}`;
    return this.unwritable === null ? null : `the job queue's database cannot write: ${this.unwritable}`;
  }

  /** /readyz's write while a write was refused because the database cannot write (store/pg/write-probe.ts): success clears it */
  async probeWrite(): Promise<void> {
    if (this.closed) throw closedError();
    try {
      await this.rows.probeWrite();
    } catch (e) {
      throw this.failed(e);
    }
    this.unwritable = null;
  }

  /** one transaction; its job-stop and webhook rows commit with it; parked callers and listeners are told after */
  async tx<T>(fn: (c: JobRowsTx, fx: Effects) => Promise<T>): Promise<T> {
    const fx = newEffects();
    const out = await this.txRun(fn, fx).catch((e: unknown) => Promise.reject(this.failed(e)));
    this.publish(fx);
    return out;
  }

  private txRun<T>(fn: (c: JobRowsTx, fx: Effects) => Promise<T>, fx: Effects): Promise<T> {
    return this.rows.tx(async (c) => {
      this.unreachable = null;
      const out = await fn(c, fx);
      await c.addStops(fx.stops, this.now());
      await c.dropStopsOf([...fx.lost]);
      // a final job's webhook delivery is pending from the same commit on (this replica sends it: onFinal)
      await c.queueWebhooks(fx.finals, this.now(), this.opts.replicaId);
      return out;
    });
  }

  /** after a commit: parked callers here, then (by NOTIFY) on the other replicas, then the listeners */
  publish(fx: Effects): void {
    this.opts.wakes.committed(wakesOf(fx));
    for (const job of fx.finals) for (const l of this.finalListeners) guard(() => l(job));
    for (const e of fx.recycles) for (const l of this.recycleListeners) guard(() => l(e));
  }

  /** computes each record's change with the embedded queue's table and writes them, under the rows' locks */
  async applyRecs(c: JobRowsTx, fx: Effects, items: RowChange[]): Promise<Job[]> {
    const out: Job[] = [];
    const writes: Omit<RowWrite, 'dueAt'>[] = [];
    for (const { row, rec } of items) {
      const after = transition(row.job, rec, this.opts.table);
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
      const seqs = await c.nextSeqs(entering.length);
      entering.forEach((w, i) => (w.seq = seqs[i]!));
    }
    await this.writeRows(c, writes);
    return out;
  }

  /** rows written as computed (their deadlines noted first) */
  async writeRows(c: JobRowsTx, writes: readonly Omit<RowWrite, 'dueAt'>[]): Promise<void> {
    const due = writes.map((w) => ({ ...w, dueAt: dueAt(w.after) }));
    for (const w of due) this.opts.noteDue(w.dueAt);
    await c.write(due);
  }

  /** the job unless it is unknown or gone (past its retention or ttl) */
  async find(jobId: string): Promise<Job | undefined> {
    const job = (await this.call((r) => r.find(jobId)))?.job;
    return job && visible(job, this.now()) ? job : undefined;
  }

  async lockOne(c: JobRowsTx, jobId: string): Promise<JobRow> {
    const row = await c.lockOne(jobId);
    if (!row || !visible(row.job, this.now())) throw notFound(jobId);
    return row;
  }

  async lockMany(c: JobRowsTx, which: RowsToLock): Promise<JobRow[]> {
    const rows = await c.lock(which);
    const now = this.now();
    return rows.filter((r) => visible(r.job, now));
  }
}

/** the job, if `workerId` holds it IN_PROGRESS; otherwise why not, as an error */
export function held(job: Job, workerId: string): Job {
  if (isFinal(job.status)) {
    throw new GpufleetError('JOB_ALREADY_FINAL', `job ${job.id} is already ${job.status}`, { fields: { jobId: job.id, status: job.status, workerId: job.workerId } });
  }
  if (job.status !== 'IN_PROGRESS' || job.workerId !== workerId) throw leaseLost(job.id, workerId, job);
  return job;
}

export function closedError(): GpufleetError {
  return new GpufleetError('INTERNAL', 'the job queue is closed');
}

export function notFound(jobId: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `job ${jobId} not found`, { fields: { jobId } });
}

export function leaseLost(jobId: string, workerId: string, job: Job): GpufleetError {
  return new GpufleetError('JOB_LEASE_LOST', `worker ${workerId} does not hold job ${jobId} (it is ${job.status})`, {
    fields: { jobId, status: job.status, workerId: job.workerId },
  });
}
