// The queue's statements that need no lock taken beforehand: each is one round trip and commits on
// its own. They make the same changes as the embedded queue's records (job-table.ts): `take`,
// `fin` (the common report), lease renewals, stream chunks and the stream cursor.
import type pg from 'pg';
import { JOB_LIMITS, type Job, type Retention } from '../../../model/index.ts';
import type { FinalReport, JobCountsRow, JobDepthRow, JobListFilter, StreamChunks } from '../../base/job-rows.ts';
import { fromRow, JOB_COLUMNS, type JobRowData } from './job-row-sql.ts';
import { OTHERS_WAITING_SQL } from './replicas.ts';

export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]) => Promise<pg.QueryResult<R>>;

/** FOR UPDATE SKIP LOCKED: concurrent takers (on any replica) each get other jobs, none waits; [] when none */
export async function claimJobs(q: Query, endpointId: string, workerId: string, max: number, at: number, leaseMs: number): Promise<Job[]> {
  const { rows } = await q<JobRowData & { lane: number; seq: string }>(
    `WITH picked AS (
       SELECT id AS pid FROM gf_jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND expires_at > $2
       ORDER BY lane, seq LIMIT $3 FOR UPDATE SKIP LOCKED)
     UPDATE gf_jobs SET status = 'IN_PROGRESS', worker_id = $4, started_at = $2, delay_time = $2 - queued_at,
       lease_expires_at = $2 + $5::bigint, finished_at = NULL, execution_time = NULL, output = NULL, error = NULL, expires_at = NULL,
       attempt = attempt + 1, due_at = LEAST($2 + $5::bigint, $2 + execution_timeout)
     FROM picked WHERE id = picked.pid
     RETURNING ${JOB_COLUMNS}, lane, seq`,
    [endpointId, at, max, workerId, leaseMs],
  );
  rows.sort((a, b) => a.lane - b.lane || Number(a.seq) - Number(b.seq));
  return rows.map((r) => fromRow(r).job);
}

/** a chunk from the lease holder, which renews its lease; false when the worker does not hold the job */
export async function appendChunk(q: Query, jobId: string, workerId: string, chunk: unknown, leaseUntil: number): Promise<boolean> {
  const { rowCount } = await q(
    `WITH j AS (
       UPDATE gf_jobs SET stream_len = stream_len + 1, lease_expires_at = GREATEST(lease_expires_at, $4),
         due_at = LEAST(GREATEST(lease_expires_at, $4), started_at + execution_timeout)
       WHERE id = $1 AND status = 'IN_PROGRESS' AND worker_id = $2 RETURNING stream_len - 1 AS n),
     ins AS (INSERT INTO gf_job_chunks (job_id, n, output) SELECT $1, n, $3::json FROM j RETURNING n)
     SELECT n FROM ins`,
    [jobId, workerId, JSON.stringify(chunk), leaseUntil],
  );
  return rowCount === 1;
}

/** the chunks from the job's cursor (advanced, compare-and-set: two readers never get one chunk twice) or from `from` */
export async function readChunks(q: Query, jobId: string, from: number | undefined, now: number): Promise<StreamChunks | undefined> {
  for (;;) {
    const { rows } = await q<{ status: Job['status']; expires_at: string | null; stream_len: number; stream_read: number }>(
      'SELECT status, expires_at, stream_len, stream_read FROM gf_jobs WHERE id = $1',
      [jobId],
    );
    const r = rows[0];
    if (!r || (r.status !== 'IN_PROGRESS' && r.expires_at !== null && Number(r.expires_at) <= now)) return undefined;
    const start = from ?? r.stream_read;
    if (from === undefined && r.stream_len > r.stream_read) {
      const moved = await q('UPDATE gf_jobs SET stream_read = $2 WHERE id = $1 AND stream_read = $3', [jobId, r.stream_len, r.stream_read]);
      if (moved.rowCount !== 1) continue; // another read took them first
    }
    const chunks = r.stream_len > start
      ? (await q<{ output: string }>('SELECT output::text AS output FROM gf_job_chunks WHERE job_id = $1 AND n >= $2 AND n < $3 ORDER BY n', [jobId, start, r.stream_len])).rows.map((c) => JSON.parse(c.output) as unknown)
      : [];
    return { status: r.status, chunks, next: r.stream_len };
  }
}

/**
 * The common final report in one statement: COMPLETED or FAILED, conditional on the job being
 * IN_PROGRESS under this worker (the UPDATE's row lock makes a second report wait, then find it
 * final). The same change as the `fin` record (job-table.ts, job.ts resultExpiry). A job with a
 * webhook (its outbox row goes in the same commit) is left to the caller's transaction: undefined.
 */
export async function finishHeldJob(q: Query, jobId: string, workerId: string, result: FinalReport, at: number, retention: Retention): Promise<Job | undefined> {
  const keep = `(CASE WHEN sync THEN $7 ELSE $8 END)::bigint`;
  const expiry = `GREATEST(LEAST($4::bigint + ${keep}, queued_at + ttl), $4::bigint + LEAST(${keep}, $9::bigint))`;
  const { rows } = await q<JobRowData>(
    `UPDATE gf_jobs SET status = $3, finished_at = $4, execution_time = $4::bigint - started_at, output = $5::json,
       error = COALESCE($6::json, error), lease_expires_at = NULL, expires_at = ${expiry}, due_at = ${expiry}
     WHERE id = $1 AND status = 'IN_PROGRESS' AND worker_id = $2 AND webhook IS NULL
     RETURNING ${JOB_COLUMNS}`,
    [
      jobId, workerId, result.error !== undefined ? 'FAILED' : 'COMPLETED', at,
      result.output === undefined ? null : JSON.stringify(result.output), result.error === undefined ? null : JSON.stringify(result.error),
      retention.syncMs, retention.asyncMs, JOB_LIMITS.syncRetention,
    ],
  );
  return rows[0] ? fromRow(rows[0]).job : undefined;
}

/** heartbeat: the leases of those jobs the worker holds and whose lease has not run out yet; answers their ids */
export async function renewLeases(q: Query, workerId: string, jobIds: readonly string[], until: number, now: number): Promise<Set<string>> {
  const { rows } = await q<{ id: string }>(
    `UPDATE gf_jobs SET lease_expires_at = GREATEST(lease_expires_at, $3), due_at = LEAST(GREATEST(lease_expires_at, $3), started_at + execution_timeout)
     WHERE id = ANY($1) AND status = 'IN_PROGRESS' AND worker_id = $2 AND lease_expires_at > $4 RETURNING id`,
    [jobIds, workerId, until, now],
  );
  return new Set(rows.map((r) => r.id));
}

/** `completedJobs`: a page of the endpoint's retained COMPLETED jobs after the cursor, in (finished_at, id) order */
export async function completedAfter(q: Query, endpointId: string, after: { finishedAt: number; id: string }, limit: number, now: number): Promise<Job[]> {
  const { rows } = await q<JobRowData>(
    `SELECT ${JOB_COLUMNS} FROM gf_jobs
     WHERE endpoint_id = $1 AND status = 'COMPLETED' AND expires_at > $5 AND (finished_at, id COLLATE "C") > ($2::bigint, $3::text COLLATE "C")
     ORDER BY finished_at, id COLLATE "C" LIMIT $4`,
    [endpointId, after.finishedAt, after.id, limit, now],
  );
  return rows.map((r) => fromRow(r).job);
}

/** JOB_COLUMNS with the bodies not in `bodies` read as nothing (input JSON null, output and error SQL NULL) */
export function listColumns(bodies: JobListFilter['bodies']): string {
  let cols = JOB_COLUMNS;
  if (!bodies?.has('input')) cols = cols.replace('input::text AS input', `'null' AS input`);
  if (!bodies?.has('output')) cols = cols.replace('output::text AS output', 'NULL::text AS output');
  if (!bodies?.has('error')) cols = cols.replace('error::text AS error', 'NULL::text AS error');
  return cols;
}

/**
 * `listJobs`: a page of the account's jobs of the endpoint still held (queued, running, or final and
 * not yet past its retention: what `find` shows), newest first by (created_at, id). The endpoint's
 * history index (migration 5: endpoint_id, account_id, created_at DESC, id DESC) gives the rows in
 * page order, so a page reads `limit` rows, and only the bodies asked for.
 */
export async function listJobs(q: Query, f: JobListFilter, now: number): Promise<Job[]> {
  const { rows } = await q<JobRowData>(
    `SELECT ${listColumns(f.bodies)} FROM gf_jobs
     WHERE endpoint_id = $1 AND account_id = $2 AND (status = 'IN_PROGRESS' OR expires_at IS NULL OR expires_at > $3)
       AND ($4::text[] IS NULL OR status = ANY($4::text[]))
       AND ($5::bigint IS NULL OR (created_at, id COLLATE "C") < ($5::bigint, $6::text COLLATE "C"))
     ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $7`,
    [f.endpointId, f.accountId, now, f.statuses ? [...f.statuses] : null, f.after?.createdAt ?? null, f.after?.id ?? '', f.limit],
  );
  return rows.map((r) => fromRow(r).job);
}

export async function countJobs(q: Query, endpointId: string, now: number): Promise<JobCountsRow> {
  const { rows } = await q<Record<keyof JobCountsRow, number>>(
    `SELECT count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed,
            count(*) FILTER (WHERE status IN ('FAILED', 'TIMED_OUT'))::int AS failed,
            count(*) FILTER (WHERE status = 'IN_PROGRESS')::int AS "inProgress",
            count(*) FILTER (WHERE status = 'IN_QUEUE')::int AS "inQueue",
            count(*) FILTER (WHERE retries > 0)::int AS retried
     FROM gf_jobs WHERE endpoint_id = $1 AND (status = 'IN_PROGRESS' OR expires_at > $2)`,
    [endpointId, now],
  );
  return { ...rows[0]! };
}

/** `depth`, with the workers waiting on the other live replicas (this replica adds its own) */
export async function depthOf(q: Query, endpointId: string, now: number, replicaId: string): Promise<JobDepthRow> {
  const { rows } = await q<{ in_queue: number; low: number; in_progress: number; oldest: string | null; others: number }>(
    `SELECT count(*) FILTER (WHERE status = 'IN_QUEUE' AND NOT low_priority)::int AS in_queue,
            count(*) FILTER (WHERE status = 'IN_QUEUE' AND low_priority)::int AS low,
            count(*) FILTER (WHERE status = 'IN_PROGRESS')::int AS in_progress,
            min(queued_at) FILTER (WHERE status = 'IN_QUEUE' AND NOT low_priority) AS oldest,
            ${OTHERS_WAITING_SQL} AS others
     FROM gf_jobs WHERE endpoint_id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS') AND (status = 'IN_PROGRESS' OR expires_at > $2)`,
    [endpointId, now, replicaId],
  );
  const r = rows[0]!;
  return {
    inQueue: r.in_queue,
    lowPriority: r.low,
    inProgress: r.in_progress,
    oldestQueuedAt: r.oldest === null ? null : Number(r.oldest),
    othersWaiting: r.others,
  };
}
