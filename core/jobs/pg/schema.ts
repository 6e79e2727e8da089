// The PostgreSQL job queue's tables, created at start (idempotently, under an advisory lock so that
// replicas starting together do not race). Times and durations are epoch milliseconds (bigint), as
// everywhere in the queue; `input`, `output`, `error` and stream chunks are `json` (not `jsonb`),
// which keeps the text as sent: key order and `\u0000` escapes survive unchanged.
import type pg from 'pg';
import { GpufleetError } from '../../../model/index.ts';

/** bumped when a statement below changes; recorded in gpufleet_job_schema */
export const JOB_SCHEMA_VERSION = 1;

/** any 64-bit constant, shared by every replica: the lock around the DDL below */
const SCHEMA_LOCK = 0x67706a6f62; // "gpjob"

const DDL = `
CREATE TABLE IF NOT EXISTS gpufleet_job_schema (version integer NOT NULL);
CREATE SEQUENCE IF NOT EXISTS gpufleet_job_seq;
CREATE TABLE IF NOT EXISTS gpufleet_jobs (
  id               text PRIMARY KEY,
  endpoint_id      text NOT NULL,
  account_id       text NOT NULL,
  input            json NOT NULL,
  webhook          text,
  execution_timeout bigint NOT NULL,
  ttl              bigint NOT NULL,
  low_priority     boolean NOT NULL,
  sync             boolean NOT NULL,
  status           text NOT NULL,
  created_at       bigint NOT NULL,
  queued_at        bigint NOT NULL,
  started_at       bigint,
  finished_at      bigint,
  worker_id        text,
  lease_expires_at bigint,
  delay_time       bigint,
  execution_time   bigint,
  output           json,
  error            json,
  retries          integer NOT NULL,
  auto_retries     integer NOT NULL,
  expires_at       bigint,
  -- IN_QUEUE: 0 requeued (served first), 1 normal, 2 lowPriority; FIFO by seq within a lane
  lane             smallint NOT NULL,
  seq              bigint NOT NULL,
  -- the lease token: one more on every take, so a write made for one attempt never lands on the next
  attempt          integer NOT NULL DEFAULT 0,
  -- the next deadline: IN_QUEUE its ttl, IN_PROGRESS min(lease, execution timeout), final its retention
  due_at           bigint,
  stream_len       integer NOT NULL DEFAULT 0,
  -- the stream cursor of the job (GET /stream returns only what no earlier poll did, on any replica)
  stream_read      integer NOT NULL DEFAULT 0
);
-- the job's s3Config as the job side sealed it (its secret is ciphertext here, as in the embedded log)
ALTER TABLE gpufleet_jobs ADD COLUMN IF NOT EXISTS s3_config json;
CREATE INDEX IF NOT EXISTS gpufleet_jobs_queued ON gpufleet_jobs (endpoint_id, lane, seq) WHERE status = 'IN_QUEUE';
CREATE INDEX IF NOT EXISTS gpufleet_jobs_running ON gpufleet_jobs (worker_id) WHERE status = 'IN_PROGRESS';
CREATE INDEX IF NOT EXISTS gpufleet_jobs_endpoint ON gpufleet_jobs (endpoint_id);
CREATE INDEX IF NOT EXISTS gpufleet_jobs_due ON gpufleet_jobs (due_at);
-- completedJobs pages (the public model charge sweep): read in order from here, not sorted per page
CREATE INDEX IF NOT EXISTS gpufleet_jobs_completed ON gpufleet_jobs (endpoint_id, finished_at, id COLLATE "C") WHERE status = 'COMPLETED';
CREATE TABLE IF NOT EXISTS gpufleet_job_chunks (
  job_id text NOT NULL REFERENCES gpufleet_jobs (id) ON DELETE CASCADE,
  n      integer NOT NULL,
  output json NOT NULL,
  PRIMARY KEY (job_id, n)
);
-- job-stop requests not yet handed to their worker (its next job-stop poll, on any replica)
CREATE TABLE IF NOT EXISTS gpufleet_job_stops (
  worker_id text NOT NULL,
  job_id    text NOT NULL,
  at        bigint NOT NULL,
  PRIMARY KEY (worker_id, job_id)
);
-- webhook deliveries pending from a job's final status on (with the job as it was final, which may
-- outlive its retention), each owned by the replica delivering it; a dead owner's are taken over
CREATE TABLE IF NOT EXISTS gpufleet_job_webhooks (
  job_id   text PRIMARY KEY,
  job      json NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_at  bigint NOT NULL,
  owner    text NOT NULL
);
-- the replicas serving the queue: liveness, and the workers waiting in take on each (depth)
CREATE TABLE IF NOT EXISTS gpufleet_job_replicas (
  id      text PRIMARY KEY,
  seen_at bigint NOT NULL,
  waiting jsonb NOT NULL DEFAULT '{}'
);
`;

/** creates the queue's tables if they are missing; safe to run from several replicas at once */
export async function ensureJobSchema(pool: pg.Pool): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await c.query(DDL);
    const { rows } = await c.query<{ version: number }>('SELECT version FROM gpufleet_job_schema');
    if (rows.length === 0) await c.query('INSERT INTO gpufleet_job_schema (version) VALUES ($1)', [JOB_SCHEMA_VERSION]);
    else if (rows[0]!.version > JOB_SCHEMA_VERSION) {
      throw new GpufleetError('INTERNAL', `the job queue's tables are at schema version ${rows[0]!.version}, newer than this gpufleet (${JOB_SCHEMA_VERSION})`);
    }
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}
