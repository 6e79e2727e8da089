// The PostgreSQL schema, the one migration system of every table (the store's and the job queue's,
// all prefixed gf_): versioned migrations (applied in order, each once, each in one transaction,
// recorded in gf_schema_migrations) plus one table per collection of the model, derived from
// COLLECTION_NAMES and INDEXED_FIELDS so a collection added to the model needs no migration of its
// own. Everything runs under one session-level advisory lock, so replicas starting together apply
// each step once. Nothing else in gpufleet makes tables.
import pg from 'pg';
import { COLLECTION_NAMES, INDEXED_FIELDS, GpufleetError } from '../../model/index.ts';
import { JOB_HISTORY_INDEX_MIGRATION } from './job-history-index-migration.ts';
import { JOB_TABLES_MIGRATION } from './job-tables-migration.ts';
import type { AfterStatement, Migration } from './migration.ts';

/** pg_advisory_lock key of schema changes ("gpufleet" as a number; any fixed value would do) */
export const MIGRATION_LOCK_KEY = 0x67706666;

/** Never edit an applied migration: add the next one. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'base',
    sql: `
      -- one value per committed transaction that wrote: the version of every row it wrote
      CREATE SEQUENCE IF NOT EXISTS gf_rev;
      -- settings of the database itself (the secret key's check value)
      CREATE TABLE IF NOT EXISTS gf_meta (key text PRIMARY KEY, value text NOT NULL);
      -- one row per GPU given to a pod: the constraint that stops two replicas giving one GPU twice
      CREATE TABLE IF NOT EXISTS gf_gpu_claims (
        host_id text NOT NULL,
        gpu_uuid text NOT NULL,
        owner_id text NOT NULL,
        CONSTRAINT gf_gpu_claims_pkey PRIMARY KEY (host_id, gpu_uuid)
      );
      CREATE INDEX IF NOT EXISTS gf_gpu_claims_owner ON gf_gpu_claims (owner_id);
    `,
  },
  {
    // several replicas (docs/replicas.md; core/replicas): who is alive, who reconciles which host, and
    // the rate-limit windows they share
    version: 2,
    name: 'replicas',
    sql: `
      CREATE TABLE IF NOT EXISTS gf_replicas (id text PRIMARY KEY, seen_at timestamptz NOT NULL);
      CREATE TABLE IF NOT EXISTS gf_host_leases (
        host_id text PRIMARY KEY,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        -- how many times the lease changed hands
        epoch bigint NOT NULL DEFAULT 1
      );
      CREATE INDEX IF NOT EXISTS gf_host_leases_holder ON gf_host_leases (holder);
      -- loops that run on one replica of all (the serverless autoscaler): who runs them, until when
      CREATE TABLE IF NOT EXISTS gf_leaders (name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL);
      CREATE TABLE IF NOT EXISTS gf_rate_limits (subject text PRIMARY KEY, starts bigint[] NOT NULL, used int[] NOT NULL);
      -- counts p_units in every window of the subject or in none (a window with fewer left refuses),
      -- windows aligned to the epoch by the database's clock; answers the state after the call
      CREATE OR REPLACE FUNCTION gf_rate_take(p_subject text, p_seconds int[], p_quotas int[], p_units int)
        RETURNS TABLE (now_s bigint, starts bigint[], used int[], taken boolean) LANGUAGE plpgsql AS $$
      DECLARE
        t bigint := floor(extract(epoch FROM clock_timestamp()))::bigint;
        n int := array_length(p_seconds, 1);
        s bigint[];
        u int[];
        cur_s bigint[];
        cur_u int[];
        ok boolean := true;
      BEGIN
        SELECT array_agg(t - t % p_seconds[i] ORDER BY i) INTO s FROM generate_series(1, n) AS i;
        INSERT INTO gf_rate_limits AS r (subject, starts, used) VALUES (p_subject, s, array_fill(0, ARRAY[n]))
          ON CONFLICT (subject) DO NOTHING;
        SELECT r.starts, r.used INTO cur_s, cur_u FROM gf_rate_limits r WHERE r.subject = p_subject FOR UPDATE;
        u := array_fill(0, ARRAY[n]);
        FOR i IN 1 .. n LOOP
          IF cur_s[i] IS NOT DISTINCT FROM s[i] THEN u[i] := coalesce(cur_u[i], 0); END IF;
          IF p_quotas[i] - u[i] < p_units THEN ok := false; END IF;
        END LOOP;
        IF ok THEN
          FOR i IN 1 .. n LOOP u[i] := u[i] + p_units; END LOOP;
        END IF;
        IF ok OR cur_s IS DISTINCT FROM s THEN
          UPDATE gf_rate_limits r SET starts = s, used = u WHERE r.subject = p_subject;
        END IF;
        RETURN QUERY SELECT t, s, u, ok;
      END $$;
      -- gives units back in the windows that still start where they were counted
      CREATE OR REPLACE FUNCTION gf_rate_refund(p_subject text, p_starts bigint[], p_units int) RETURNS void LANGUAGE sql AS $$
        UPDATE gf_rate_limits r SET used = ARRAY(
          SELECT CASE WHEN r.starts[i] = p_starts[i] THEN greatest(0, r.used[i] - p_units) ELSE r.used[i] END
          FROM generate_series(1, array_length(r.used, 1)) AS i ORDER BY i)
        WHERE r.subject = p_subject;
      $$;
    `,
  },
  {
    // global networking (docs/networking.md): an overlay address belongs to one pod in the whole fleet, and
    // an overlay VXLAN id to one account,
    // also when replicas allocate at once; a conflict rolls the transaction back and it runs again
    version: 3,
    name: 'overlay-addresses',
    sql: `
      CREATE TABLE IF NOT EXISTS gf_pods (id text PRIMARY KEY, ord bigint NOT NULL, rev bigint NOT NULL, data jsonb NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS gf_pods_overlay_ip ON gf_pods ((data ->> 'overlayIp')) WHERE data ? 'overlayIp';
      CREATE TABLE IF NOT EXISTS gf_accounts (id text PRIMARY KEY, ord bigint NOT NULL, rev bigint NOT NULL, data jsonb NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS gf_accounts_overlay_vni ON gf_accounts ((data ->> 'overlayVni')) WHERE data ? 'overlayVni';
    `,
  },
  // the job queue's tables (gpufleet_* made at start until this version), renamed with their rows
  JOB_TABLES_MIGRATION,
  // the job history's page in index order (GET /v2/serverless/{id}/jobs)
  JOB_HISTORY_INDEX_MIGRATION,
];

/** The table a collection lives in: `gf_` and its name in snake case (apiKeys → gf_api_keys). */
export function tableOf(collection: string): string {
  if (!(COLLECTION_NAMES as readonly string[]).includes(collection) || !/^[a-z][A-Za-z0-9]*$/.test(collection))
    throw new GpufleetError('INTERNAL', `unknown collection ${collection}`);
  return `gf_${collection.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
}

/** A JSON field name safe to write into SQL as a literal (the model's field names are identifiers). */
export function fieldLiteral(field: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new GpufleetError('INTERNAL', `cannot filter on field ${JSON.stringify(field)}`);
  return `'${field}'`;
}

const collectionDdl = (): string =>
  COLLECTION_NAMES.map((c) => {
    const t = tableOf(c);
    const indexes = (INDEXED_FIELDS[c] ?? []).map(
      (f) => `CREATE INDEX IF NOT EXISTS ${t}_${f.toLowerCase()} ON ${t} ((data -> ${fieldLiteral(f)}));`,
    );
    // ord: when the id was first written; lists come back in that order (stable across updates,
    // whatever the heap does with updated rows)
    return [`CREATE TABLE IF NOT EXISTS ${t} (id text PRIMARY KEY, ord bigint NOT NULL, rev bigint NOT NULL, data jsonb NOT NULL);`, ...indexes].join('\n');
  }).join('\n');

export interface MigrateResult {
  /** versions applied by this call */
  applied: number[];
  /** the schema version now */
  version: number;
}

/**
 * Applies the migrations this database lacks and creates missing collection tables and indexes, under
 * the advisory lock. Refuses a database whose schema is newer than this version knows.
 */
export async function migrate(pool: pg.Pool, opts: { afterStatement?: AfterStatement } = {}): Promise<MigrateResult> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS gf_schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM gf_schema_migrations')).rows.map((r) => r.version));
      const newest = Math.max(0, ...done);
      const known = Math.max(...MIGRATIONS.map((m) => m.version));
      if (newest > known)
        throw new GpufleetError('INTERNAL', `the database's schema is at version ${newest}, newer than this gpufleet knows (${known}): upgrade gpufleet`, {
          fields: { schemaVersion: newest, knownVersion: known },
        });
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await m.check?.(client);
          const statements = typeof m.sql === 'string' ? [m.sql] : m.sql;
          for (const [i, sql] of statements.entries()) {
            await client.query(sql);
            await opts.afterStatement?.(m.version, i + 1);
          }
          await client.query('INSERT INTO gf_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
        applied.push(m.version);
      }
      await client.query(collectionDdl());
      return { applied, version: known };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

/** `gpufleet db migrate`: migrates the database at `url` on a connection of its own. */
export async function migrateDatabase(url: string, opts: { afterStatement?: AfterStatement } = {}): Promise<MigrateResult> {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: 'gpufleet db migrate' });
  try {
    return await migrate(pool, opts);
  } finally {
    await pool.end();
  }
}

/** The versions not yet applied (for `gpufleet db migrate --status` and start without migrating). */
export async function pendingMigrations(pool: pg.Pool): Promise<number[]> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('gf_schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return MIGRATIONS.map((m) => m.version);
  const done = new Set((await pool.query<{ version: number }>('SELECT version FROM gf_schema_migrations')).rows.map((r) => r.version));
  return MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => m.version);
}
