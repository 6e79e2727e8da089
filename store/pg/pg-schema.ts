// The PostgreSQL schema: versioned migrations (applied in order, each once, recorded in
// gf_schema_migrations) plus one table per collection of the model, derived from COLLECTION_NAMES and
// INDEXED_FIELDS so a collection added to the model needs no migration of its own. Everything runs
// under one session-level advisory lock, so replicas starting together apply each step once.
import type pg from 'pg';
import { COLLECTION_NAMES, INDEXED_FIELDS, GpufleetError } from '../../model/index.ts';

/** pg_advisory_lock key of schema changes ("gpufleet" as a number; any fixed value would do) */
export const MIGRATION_LOCK_KEY = 0x67706666;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

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
    return [`CREATE TABLE IF NOT EXISTS ${t} (id text PRIMARY KEY, rev bigint NOT NULL, data jsonb NOT NULL);`, ...indexes].join('\n');
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
export async function migrate(pool: pg.Pool): Promise<MigrateResult> {
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
          await client.query(m.sql);
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

/** The versions not yet applied (for `gpufleet db migrate --status` and start without migrating). */
export async function pendingMigrations(pool: pg.Pool): Promise<number[]> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('gf_schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return MIGRATIONS.map((m) => m.version);
  const done = new Set((await pool.query<{ version: number }>('SELECT version FROM gf_schema_migrations')).rows.map((r) => r.version));
  return MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => m.version);
}
