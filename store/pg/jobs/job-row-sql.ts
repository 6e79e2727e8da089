// A job as a row of gf_jobs, and back. Transitions are computed by core (the embedded queue's own
// JobTable, core/jobs/queue-rules.ts), so both queues change a job in exactly the same way; this file
// only maps the result onto columns and writes it conditionally.
import type pg from 'pg';
import { GpufleetError } from '../../../model/index.ts';
import type { Job, JobStatus } from '../../../model/index.ts';
import type { JobRow, RowWrite } from '../../base/job-rows.ts';

/** the columns every read selects (json columns as text: SQL NULL and JSON `null` stay apart) */
export const JOB_COLUMNS = `id, endpoint_id, account_id, input::text AS input, webhook, s3_config::text AS s3_config, execution_timeout, ttl, low_priority, sync,
  status, created_at, queued_at, started_at, finished_at, worker_id, lease_expires_at, delay_time, execution_time,
  output::text AS output, error::text AS error, retries, auto_retries, expires_at, attempt, stream_len, stream_read`;

export interface JobRowData {
  id: string;
  endpoint_id: string;
  account_id: string;
  input: string;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout: string;
  ttl: string;
  low_priority: boolean;
  sync: boolean;
  status: JobStatus;
  created_at: string;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  worker_id: string | null;
  lease_expires_at: string | null;
  delay_time: string | null;
  execution_time: string | null;
  output: string | null;
  error: string | null;
  retries: number;
  auto_retries: number;
  expires_at: string | null;
  attempt: number;
  stream_len: number;
  stream_read: number;
}

const num = (v: string | null): number | undefined => (v === null ? undefined : Number(v));

export function fromRow(r: JobRowData): JobRow {
  const job: Record<string, unknown> = {
    id: r.id,
    endpointId: r.endpoint_id,
    accountId: r.account_id,
    input: JSON.parse(r.input),
    ...(r.webhook !== null ? { webhook: r.webhook } : {}),
    ...(r.s3_config !== null ? { s3Config: JSON.parse(r.s3_config) } : {}),
    policy: Object.freeze({ executionTimeout: Number(r.execution_timeout), ttl: Number(r.ttl), lowPriority: r.low_priority }),
    sync: r.sync,
    status: r.status,
    createdAt: Number(r.created_at),
    queuedAt: Number(r.queued_at),
    retries: r.retries,
    autoRetries: r.auto_retries,
  };
  const optional: [keyof Job, unknown][] = [
    ['startedAt', num(r.started_at)],
    ['finishedAt', num(r.finished_at)],
    ['workerId', r.worker_id ?? undefined],
    ['leaseExpiresAt', num(r.lease_expires_at)],
    ['delayTime', num(r.delay_time)],
    ['executionTime', num(r.execution_time)],
    ['output', r.output === null ? undefined : JSON.parse(r.output)],
    ['error', r.error === null ? undefined : JSON.parse(r.error)],
    ['expiresAt', num(r.expires_at)],
  ];
  for (const [k, v] of optional) if (v !== undefined) job[k] = v; // a JSON null output is kept
  return { job: Object.freeze(job) as unknown as Job, attempt: r.attempt, streamLen: r.stream_len, streamRead: r.stream_read };
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** the parameters of the INSERT below, in its column order */
export function insertParams(job: Job, lane: number, attempt: number, dueAt: number | null): unknown[] {
  return [
    job.id, job.endpointId, job.accountId, JSON.stringify(job.input), job.webhook ?? null, job.policy.executionTimeout, job.policy.ttl,
    job.policy.lowPriority, job.sync, job.status, job.createdAt, job.queuedAt, job.startedAt ?? null, job.workerId ?? null,
    job.leaseExpiresAt ?? null, job.delayTime ?? null, job.expiresAt ?? null, lane, attempt, dueAt, json(job.s3Config),
  ];
}

export const INSERT_JOB = `INSERT INTO gf_jobs (id, endpoint_id, account_id, input, webhook, execution_timeout, ttl, low_priority, sync,
  status, created_at, queued_at, started_at, worker_id, lease_expires_at, delay_time, expires_at, retries, auto_retries, lane, seq, attempt, due_at, s3_config)
  VALUES ($1, $2, $3, $4::json, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 0, 0, $18, nextval('gf_job_seq'), $19, $20, $21::json)`;

/**
 * Writes the changed jobs in one statement. Each update is conditional on the status and lease token
 * read (the rows are locked by the caller, so this never misses; if it ever did, the transaction is
 * refused rather than a change landing on a job that moved on).
 */
export async function writeJobs(c: pg.ClientBase, writes: readonly RowWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const col = <T>(f: (w: RowWrite) => T): T[] => writes.map(f);
  const res = await c.query(
    `UPDATE gf_jobs j SET status = v.status, queued_at = v.queued_at, started_at = v.started_at, finished_at = v.finished_at,
       worker_id = v.worker_id, lease_expires_at = v.lease_expires_at, delay_time = v.delay_time, execution_time = v.execution_time,
       output = v.output::json, error = v.error::json, retries = v.retries, auto_retries = v.auto_retries, expires_at = v.expires_at,
       ttl = v.ttl, lane = COALESCE(v.lane, j.lane), seq = COALESCE(v.seq, j.seq), due_at = v.due_at
     FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int8[], $6::int8[], $7::int8[], $8::text[], $9::int8[], $10::int8[],
       $11::int8[], $12::text[], $13::text[], $14::int4[], $15::int4[], $16::int8[], $17::int8[], $18::int2[], $19::int8[], $20::int8[])
       AS v(id, old_status, old_attempt, status, queued_at, started_at, finished_at, worker_id, lease_expires_at, delay_time,
            execution_time, output, error, retries, auto_retries, expires_at, ttl, lane, seq, due_at)
     WHERE j.id = v.id AND j.status = v.old_status AND j.attempt = v.old_attempt`,
    [
      col((w) => w.before.job.id), col((w) => w.before.job.status), col((w) => w.before.attempt),
      col((w) => w.after.status), col((w) => w.after.queuedAt), col((w) => w.after.startedAt ?? null), col((w) => w.after.finishedAt ?? null),
      col((w) => w.after.workerId ?? null), col((w) => w.after.leaseExpiresAt ?? null), col((w) => w.after.delayTime ?? null),
      col((w) => w.after.executionTime ?? null), col((w) => json(w.after.output)), col((w) => json(w.after.error)),
      col((w) => w.after.retries), col((w) => w.after.autoRetries), col((w) => w.after.expiresAt ?? null), col((w) => w.after.policy.ttl),
      col((w) => w.lane ?? null), col((w) => w.seq ?? null), col((w) => w.dueAt),
    ],
  );
  if (res.rowCount !== writes.length) {
    throw new GpufleetError('INTERNAL', `job queue: ${writes.length - (res.rowCount ?? 0)} of ${writes.length} job updates found the job changed under its lock`);
  }
}
