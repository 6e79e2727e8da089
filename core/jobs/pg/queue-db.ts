// The PostgreSQL queue's hold on its rows: statements on the pool, transactions that carry their
// job-stop and webhook-outbox rows with them, rows read and locked, each change computed by the
// embedded queue's JobTable (job-row.ts) and written conditionally, and, after a commit, what it sets
// off: parked callers woken here and on the other replicas (wakeups.ts), then this replica's onFinal
// and onRecycle listeners. Every part of the queue (postgres-queue.ts, worker-calls.ts,
// deadline-sweeper.ts) changes jobs through this.
import type pg from 'pg';
import { GpufleetError } from '../../../model/index.ts';
import { cannotWrite, describeDatabaseError, isServerShort, probeDatabaseWrite } from '../../../store/index.ts';
import { isFinal, type Job } from '../../../model/index.ts';
import type { TableOptions } from '../job-table.ts';
import type { RecycleEvent } from '../job-queue.ts';
import type { LogRecord } from '../log-record.ts';
import { newEffects, queueError, wakesOf, type Effects } from './effects.ts';
import { dueAt, fromRow, JOB_COLUMNS, laneOf, transition, visible, writeJobs, type JobRow, type JobRowData, type RowWrite } from './job-row.ts';
import type { Query } from './statements.ts';
import { inTransaction } from './transaction.ts';
import type { Wakeups } from './wakeups.ts';
import { queueWebhooks } from './webhook-outbox.ts';

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

  constructor(readonly pool: pg.Pool, private readonly opts: QueueDbOptions) {}

  now(): number {
    return this.opts.clock();
  }

  readonly q: Query = (sql, params) => this.query(sql, params);

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      const r = await this.pool.query<R>(sql, params);
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
    const out = queueError(e);
    if (out instanceof GpufleetError && out.code === 'STORE_UNAVAILABLE') {
      // a transaction's failure comes here already as STORE_UNAVAILABLE (transaction.ts): its cause decides
      const cause = out.cause ?? e;
      if (cannotWrite(cause)) this.unwritable = describeDatabaseError(cause);
      else if (!isServerShort(cause)) this.unreachable = String(out.fields.reason ?? out.message);
    }
    return out;
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
      await probeDatabaseWrite(this.pool);
    } catch (e) {
      throw this.failed(e);
    }
    this.unwritable = null;
  }

  /** one transaction; its job-stop and webhook rows commit with it; parked callers and listeners are told after */
  async tx<T>(fn: (c: pg.PoolClient, fx: Effects) => Promise<T>): Promise<T> {
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
      await queueWebhooks(c, fx.finals, this.now(), this.opts.replicaId);
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
  async applyRecs(c: pg.PoolClient, fx: Effects, items: RowChange[]): Promise<Job[]> {
    const out: Job[] = [];
    const writes: RowWrite[] = [];
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
      const { rows } = await c.query<{ s: string }>(`SELECT nextval('gpufleet_job_seq')::text AS s FROM generate_series(1, $1)`, [entering.length]);
      entering.forEach((w, i) => (w.seq = Number(rows[i]!.s)));
    }
    await this.writeRows(c, writes);
    return out;
  }

  /** rows written as computed (their deadlines noted first) */
  async writeRows(c: pg.PoolClient, writes: RowWrite[]): Promise<void> {
    for (const w of writes) this.opts.noteDue(dueAt(w.after));
    await writeJobs(c, writes);
  }

  /** the job unless it is unknown or gone (past its retention or ttl) */
  async find(jobId: string): Promise<Job | undefined> {
    const { rows } = await this.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE id = $1`, [jobId]);
    const job = rows[0] ? fromRow(rows[0]).job : undefined;
    return job && visible(job, this.now()) ? job : undefined;
  }

  async lockOne(c: pg.PoolClient, jobId: string): Promise<JobRow> {
    const { rows } = await c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE id = $1 FOR UPDATE`, [jobId]);
    const row = rows[0] ? fromRow(rows[0]) : undefined;
    if (!row || !visible(row.job, this.now())) throw notFound(jobId);
    return row;
  }

  async lockMany(c: pg.PoolClient, where: string, params: unknown[], order = 'seq'): Promise<JobRow[]> {
    const { rows } = await c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gpufleet_jobs WHERE ${where} ORDER BY ${order} FOR UPDATE`, params);
    const now = this.now();
    return rows.map(fromRow).filter((r) => visible(r.job, now));
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
