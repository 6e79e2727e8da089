// Migration 4: the job queue's tables join the store's migrations and prefix. Until this version the
// PostgreSQL job queue created its own tables at start (gpufleet_jobs, gpufleet_job_chunks,
// gpufleet_job_stops, gpufleet_job_webhooks, gpufleet_job_replicas, the sequence gpufleet_job_seq,
// versioned in gpufleet_job_schema). Here a database made by an older gpufleet has them renamed to
// gf_* with every row (queued and running jobs, stream chunks, job-stop requests, pending webhook
// deliveries) and a fresh one gets them made. One transaction: a crash half-way leaves the old tables
// as they were, and the next start migrates again.
//
// An older gpufleet started on the migrated database refuses: its store finds schema version 4,
// newer than it knows, and stops before its job queue starts. Behind that, gpufleet_job_schema is left
// with version 2 (older versions refuse above 1), so even an older job queue opened on its own rolls
// its CREATE TABLE IF NOT EXISTS back instead of making empty gpufleet_* tables beside gf_*.
//
// The migration refuses while replicas of the older version run (their leases are live): a job queue
// replica seen in the last few seconds, a host lease or a leadership not yet run out. Stop all
// replicas, then start the new version (docs/postgres.md, "Upgrading").
import type pg from 'pg';
import { GpufleetError } from '../../model/index.ts';
import type { Migration } from './migration.ts';

/** an older job-queue replica refreshes its row every second and counts as alive for 5 */
const OLD_REPLICA_ALIVE_MS = 5_000;

const OLD_TABLES = ['gpufleet_jobs', 'gpufleet_job_chunks', 'gpufleet_job_stops', 'gpufleet_job_webhooks', 'gpufleet_job_replicas'];

async function exists(c: pg.ClientBase, name: string): Promise<boolean> {
  const { rows } = await c.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name]);
  return rows[0]?.t != null;
}

/** refuses while replicas of an older version hold leases; blocks their writes to the lease tables until this commits */
async function noLiveReplicas(c: pg.ClientBase): Promise<void> {
  const old = await exists(c, 'gpufleet_job_replicas');
  // their next lease renewal waits for this transaction, then finds the tables moved
  await c.query(`LOCK TABLE gf_host_leases, gf_leaders${old ? ', gpufleet_job_replicas' : ''} IN EXCLUSIVE MODE`);
  const live: string[] = [];
  const { rows: hosts } = await c.query<{ holder: string; n: number; ms: string }>(
    `SELECT holder, count(*)::int AS n, ceil(extract(epoch FROM max(expires_at) - now()) * 1000)::text AS ms FROM gf_host_leases WHERE expires_at > now() GROUP BY holder`,
  );
  for (const h of hosts) live.push(`replica ${h.holder} holds ${h.n} host lease(s), running out in ${h.ms} ms`);
  const { rows: leads } = await c.query<{ name: string; holder: string; ms: string }>(
    `SELECT name, holder, ceil(extract(epoch FROM expires_at - now()) * 1000)::text AS ms FROM gf_leaders WHERE expires_at > now()`,
  );
  for (const l of leads) live.push(`replica ${l.holder} leads ${l.name}, running out in ${l.ms} ms`);
  if (old) {
    const { rows: queues } = await c.query<{ id: string }>(
      `SELECT id FROM gpufleet_job_replicas WHERE seen_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ${OLD_REPLICA_ALIVE_MS}`,
    );
    for (const q of queues) live.push(`job queue replica ${q.id} was seen less than ${OLD_REPLICA_ALIVE_MS / 1000} s ago`);
  }
  if (live.length > 0)
    throw new GpufleetError(
      'INTERNAL',
      `database migration 4 (job tables) refused: replicas of an older gpufleet still run against this database (${live.join('; ')}). ` +
        'Stop all replicas, then start the new version (a replica that was killed: wait until its leases run out, a few seconds)',
      { fields: { live } },
    );
}

/** renames one old object (table, sequence or index) to the gf_ prefix if it is there */
const renameIf = (kind: 'TABLE' | 'SEQUENCE' | 'INDEX', from: string): string =>
  `ALTER ${kind} IF EXISTS ${from} RENAME TO ${from.replace(/^gpufleet_/, 'gf_')}`;

const OLD_INDEXES = ['gpufleet_jobs_queued', 'gpufleet_jobs_running', 'gpufleet_jobs_endpoint', 'gpufleet_jobs_due', 'gpufleet_jobs_completed', ...OLD_TABLES.map((t) => `${t}_pkey`)];

/** the queue's tables as they are after the rename, or made fresh; times are epoch ms, json keeps the text as sent */
const CREATE = `
CREATE SEQUENCE IF NOT EXISTS gf_job_seq;
CREATE TABLE IF NOT EXISTS gf_jobs (
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
ALTER TABLE gf_jobs ADD COLUMN IF NOT EXISTS s3_config json;
CREATE INDEX IF NOT EXISTS gf_jobs_queued ON gf_jobs (endpoint_id, lane, seq) WHERE status = 'IN_QUEUE';
CREATE INDEX IF NOT EXISTS gf_jobs_running ON gf_jobs (worker_id) WHERE status = 'IN_PROGRESS';
CREATE INDEX IF NOT EXISTS gf_jobs_endpoint ON gf_jobs (endpoint_id);
CREATE INDEX IF NOT EXISTS gf_jobs_due ON gf_jobs (due_at);
-- completedJobs pages (the public model charge sweep): read in order from here, not sorted per page
CREATE INDEX IF NOT EXISTS gf_jobs_completed ON gf_jobs (endpoint_id, finished_at, id COLLATE "C") WHERE status = 'COMPLETED';
CREATE TABLE IF NOT EXISTS gf_job_chunks (
  job_id text NOT NULL REFERENCES gf_jobs (id) ON DELETE CASCADE,
  n      integer NOT NULL,
  output json NOT NULL,
  PRIMARY KEY (job_id, n)
);
-- job-stop requests not yet handed to their worker (its next job-stop poll, on any replica)
CREATE TABLE IF NOT EXISTS gf_job_stops (
  worker_id text NOT NULL,
  job_id    text NOT NULL,
  at        bigint NOT NULL,
  PRIMARY KEY (worker_id, job_id)
);
-- webhook deliveries pending from a job's final status on (with the job as it was final, which may
-- outlive its retention), each owned by the replica delivering it; a dead owner's are taken over
CREATE TABLE IF NOT EXISTS gf_job_webhooks (
  job_id   text PRIMARY KEY,
  job      json NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_at  bigint NOT NULL,
  owner    text NOT NULL
);
-- the replicas serving the queue: liveness, and the workers waiting in take on each (depth)
CREATE TABLE IF NOT EXISTS gf_job_replicas (
  id      text PRIMARY KEY,
  seen_at bigint NOT NULL,
  waiting jsonb NOT NULL DEFAULT '{}'
);
`;

export const JOB_TABLES_MIGRATION: Migration = {
  version: 4,
  name: 'job-tables',
  check: noLiveReplicas,
  sql: [
    ...OLD_TABLES.map((t) => renameIf('TABLE', t)),
    renameIf('SEQUENCE', 'gpufleet_job_seq'),
    ...OLD_INDEXES.map((i) => renameIf('INDEX', i)),
    // the chunks' reference to their job, under the new prefix too (it is there only on a renamed table)
    `DO $$ BEGIN
       IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'gpufleet_job_chunks_job_id_fkey') THEN
         ALTER TABLE gf_job_chunks RENAME CONSTRAINT gpufleet_job_chunks_job_id_fkey TO gf_job_chunks_job_id_fkey;
       END IF;
     END $$`,
    CREATE,
    // the guard against an older job queue (see above): only where one ran
    `DO $$ BEGIN
       IF to_regclass('gpufleet_job_schema') IS NOT NULL THEN UPDATE gpufleet_job_schema SET version = 2; END IF;
     END $$`,
  ],
};
