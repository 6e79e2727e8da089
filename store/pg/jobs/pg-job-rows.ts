// The job queue's rows in PostgreSQL (the port: store/base/job-rows.ts): tables gf_jobs,
// gf_job_chunks, gf_job_stops, gf_job_webhooks, gf_job_replicas and the sequence gf_job_seq, made by
// migration 4 (pg-migrations.ts), never at start. Every statement of the queue is here; which change
// to make is core's (core/jobs/postgres-queue.ts).
import type pg from 'pg';
import { GpufleetError, type Job, type Retention } from '../../../model/index.ts';
import type {
  FinalReport, JobCountsRow, JobDepthRow, JobListFilter, JobRow, JobRows, JobRowsFailure, JobRowsTx, JobStop, PendingWebhookRow, RowsToLock, RowWrite, StreamChunks,
} from '../../base/job-rows.ts';
import { probeDatabaseWrite } from '../write-probe.ts';
import { fromRow, INSERT_JOB, insertParams, JOB_COLUMNS, writeJobs, type JobRowData } from './job-row-sql.ts';
import { JOB_CHANNEL, Notifier } from './notifier.ts';
import { queueFailure } from './queue-errors.ts';
import { joinReplicas, leaveReplicas, refreshReplica } from './replicas.ts';
import { appendChunk, claimJobs, completedAfter, countJobs, depthOf, finishHeldJob, listJobs, readChunks, renewLeases, type Query } from './statements.ts';
import { inTransaction } from './transaction.ts';
import { queueWebhooks, takePendingWebhooks, webhookAttempted, webhookSettled } from './webhook-outbox.ts';

class PgJobRowsTx implements JobRowsTx {
  constructor(private readonly c: pg.PoolClient) {}

  async lockOne(jobId: string): Promise<JobRow | undefined> {
    const { rows } = await this.c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gf_jobs WHERE id = $1 FOR UPDATE`, [jobId]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async lock(which: RowsToLock): Promise<JobRow[]> {
    const [where, params, order] =
      'ids' in which
        ? ['id = ANY($1)', [which.ids], 'seq']
        : 'runningWorker' in which
          ? [`worker_id = $1 AND status = 'IN_PROGRESS'`, [which.runningWorker], 'started_at, lane, seq']
          : [`endpoint_id = $1${which.queuedOnly ? ` AND status = 'IN_QUEUE'` : ''}`, [which.endpointId], which.order === 'lane-seq' ? 'lane, seq' : 'seq'];
    const { rows } = await this.c.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gf_jobs WHERE ${where} ORDER BY ${order} FOR UPDATE`, params);
    return rows.map(fromRow);
  }

  async lockDue(now: number, limit: number): Promise<JobRow[]> {
    const { rows } = await this.c.query<JobRowData>(
      `SELECT ${JOB_COLUMNS} FROM gf_jobs WHERE due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    return rows.map(fromRow);
  }

  async nextSeqs(n: number): Promise<number[]> {
    const { rows } = await this.c.query<{ s: string }>(`SELECT nextval('gf_job_seq')::text AS s FROM generate_series(1, $1)`, [n]);
    return rows.map((r) => Number(r.s));
  }

  write(writes: readonly RowWrite[]): Promise<void> {
    return writeJobs(this.c, writes);
  }

  async remove(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length > 0) await this.c.query('DELETE FROM gf_jobs WHERE id = ANY($1)', [jobIds]);
  }

  async removeEndpoint(endpointId: string): Promise<void> {
    await this.c.query('DELETE FROM gf_jobs WHERE endpoint_id = $1', [endpointId]);
  }

  async addStops(stops: readonly JobStop[], at: number): Promise<void> {
    if (stops.length === 0) return;
    await this.c.query(
      'INSERT INTO gf_job_stops (worker_id, job_id, at) SELECT w, j, $3 FROM unnest($1::text[], $2::text[]) AS s(w, j) ON CONFLICT DO NOTHING',
      [stops.map((s) => s.workerId), stops.map((s) => s.jobId), at],
    );
  }

  async dropStopsOf(workerIds: readonly string[]): Promise<void> {
    if (workerIds.length > 0) await this.c.query('DELETE FROM gf_job_stops WHERE worker_id = ANY($1)', [workerIds]);
  }

  queueWebhooks(finals: readonly Job[], now: number, owner: string): Promise<void> {
    return queueWebhooks(this.c, finals, now, owner);
  }

  takePendingWebhooks(owner: string, now: number, own: boolean): Promise<PendingWebhookRow[]> {
    return takePendingWebhooks(this.c, owner, now, own);
  }
}

export class PgJobRows implements JobRows {
  private readonly q: Query;

  constructor(private readonly pool: pg.Pool) {
    this.q = (sql, params) => this.pool.query(sql, params);
  }

  async checkSchema(): Promise<void> {
    const { rows } = await this.pool.query<{ t: string | null }>("SELECT to_regclass('gf_jobs')::text AS t");
    if (!rows[0]?.t) throw new GpufleetError('INTERNAL', "the database has no job tables (gf_jobs): run gpufleet db migrate, or start the server, which migrates");
  }

  tx<T>(fn: (t: JobRowsTx) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (c) => fn(new PgJobRowsTx(c)));
  }

  async find(jobId: string): Promise<JobRow | undefined> {
    const { rows } = await this.pool.query<JobRowData>(`SELECT ${JOB_COLUMNS} FROM gf_jobs WHERE id = $1`, [jobId]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async insert(job: Job, lane: number, attempt: number, dueAt: number | null): Promise<void> {
    await this.pool.query(INSERT_JOB, insertParams(job, lane, attempt, dueAt));
  }

  claim(endpointId: string, workerId: string, max: number, at: number, leaseMs: number): Promise<Job[]> {
    return claimJobs(this.q, endpointId, workerId, max, at, leaseMs);
  }

  appendChunk(jobId: string, workerId: string, chunk: unknown, leaseUntil: number): Promise<boolean> {
    return appendChunk(this.q, jobId, workerId, chunk, leaseUntil);
  }

  readChunks(jobId: string, from: number | undefined, now: number): Promise<StreamChunks | undefined> {
    return readChunks(this.q, jobId, from, now);
  }

  finishHeld(jobId: string, workerId: string, result: FinalReport, at: number, retention: Retention): Promise<Job | undefined> {
    return finishHeldJob(this.q, jobId, workerId, result, at, retention);
  }

  renewLeases(workerId: string, jobIds: readonly string[], until: number, now: number): Promise<Set<string>> {
    return renewLeases(this.q, workerId, jobIds, until, now);
  }

  completedAfter(endpointId: string, after: { finishedAt: number; id: string }, limit: number, now: number): Promise<Job[]> {
    return completedAfter(this.q, endpointId, after, limit, now);
  }

  listJobs(filter: JobListFilter, now: number): Promise<Job[]> {
    return listJobs(this.q, filter, now);
  }

  counts(endpointId: string, now: number): Promise<JobCountsRow> {
    return countJobs(this.q, endpointId, now);
  }

  depth(endpointId: string, now: number, replicaId: string): Promise<JobDepthRow> {
    return depthOf(this.q, endpointId, now, replicaId);
  }

  async heldBy(workerId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM gf_jobs WHERE worker_id = $1 AND status = 'IN_PROGRESS' ORDER BY started_at, lane, seq`,
      [workerId],
    );
    return rows.map((r) => r.id);
  }

  async soonestDue(): Promise<number | null> {
    const { rows } = await this.pool.query<{ m: string | null }>('SELECT min(due_at) AS m FROM gf_jobs');
    return rows[0]?.m == null ? null : Number(rows[0].m);
  }

  async takeStops(workerId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ job_id: string }>('DELETE FROM gf_job_stops WHERE worker_id = $1 RETURNING job_id', [workerId]);
    return rows.map((r) => r.job_id);
  }

  async restoreStops(workerId: string, jobIds: readonly string[], at: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO gf_job_stops (worker_id, job_id, at) SELECT $1, j, $3 FROM unnest($2::text[]) AS j ON CONFLICT DO NOTHING',
      [workerId, jobIds, at],
    );
  }

  async pruneStops(before: number): Promise<void> {
    await this.pool.query('DELETE FROM gf_job_stops WHERE at < $1', [before]);
  }

  webhookAttempted(jobId: string, owner: string, attempts: number, nextAt: number): Promise<void> {
    return webhookAttempted(this.q, jobId, owner, attempts, nextAt);
  }

  webhookSettled(jobId: string, owner: string): Promise<void> {
    return webhookSettled(this.q, jobId, owner);
  }

  joinReplicas(replicaId: string, now: number, leaseMs: number): Promise<{ leasesExtended: number }> {
    return joinReplicas(this.pool, replicaId, now, leaseMs);
  }

  refreshReplica(replicaId: string, now: number, waiting: Record<string, number>): Promise<void> {
    return refreshReplica(this.pool, replicaId, now, waiting);
  }

  leaveReplicas(replicaId: string): Promise<void> {
    return leaveReplicas(this.pool, replicaId);
  }

  async announce(payload: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [JOB_CHANNEL, payload]);
  }

  async listen(onMessage: (payload: string) => void, onResume: () => void): Promise<{ close(): Promise<void> }> {
    const n = new Notifier(this.pool, onMessage, onResume);
    await n.start();
    return n;
  }

  probeWrite(): Promise<void> {
    return probeDatabaseWrite(this.pool);
  }

  failure(e: unknown): JobRowsFailure {
    return queueFailure(e);
  }

  holdErrors(): () => void {
    const ignore = (): void => undefined;
    this.pool.on('error', ignore);
    return () => this.pool.removeListener('error', ignore);
  }
}
