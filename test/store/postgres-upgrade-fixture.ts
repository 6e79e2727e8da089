// The PostgreSQL database an older gpufleet (87b9f54) wrote, for the upgrade tests
// (test/store/postgres-upgrade*.test.ts): the fixture's manifest (what it holds, made with it by
// test/fixtures/upgrade/make-postgres-fixture.ts), restoring it into a fresh database with its times
// moved to now (its jobs' ttl, leases and retention count from when it was written, as if the upgrade
// came right after the stop), and reading rows back.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { restoreDatabase, type TestPostgres } from '../harness/postgres.ts';

export const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/upgrade/postgres-87b9f54');
export const manifest = JSON.parse(readFileSync(`${FIXTURE}.json`, 'utf8')) as {
  madeAt: number;
  secretKey: string;
  user: { accountId: string; key: string };
  templateId: string;
  podId: string;
  endpointId: string;
  worker: string;
  webhookPort: number;
  jobs: Record<'running' | 'hooked' | 'cancelled' | 'queued' | 'queuedLow', string>;
  statuses: Record<string, string>;
};
export const OLD_TABLES = ['gpufleet_jobs', 'gpufleet_job_chunks', 'gpufleet_job_stops', 'gpufleet_job_webhooks', 'gpufleet_job_replicas'];
export const newName = (t: string) => t.replace(/^gpufleet_/, 'gf_');

/** a fresh database holding the fixture, its times moved to now */
export async function restoredFixture(server: TestPostgres): Promise<string> {
  const url = await server.createDatabase();
  await restoreDatabase(url, `${FIXTURE}.sql`);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const d = Date.now() - manifest.madeAt;
    await c.query(
      `UPDATE gpufleet_jobs SET created_at = created_at + $1, queued_at = queued_at + $1, started_at = started_at + $1, finished_at = finished_at + $1,
         lease_expires_at = lease_expires_at + $1, expires_at = expires_at + $1, due_at = due_at + $1`,
      [d],
    );
    await c.query('UPDATE gpufleet_job_webhooks SET next_at = next_at + $1', [d]);
    await c.query('UPDATE gpufleet_job_stops SET at = at + $1', [d]);
  } finally {
    await c.end();
  }
  return url;
}

/** every row of each table, as JSON, in the order of its text */
export async function rowsOf(url: string, tables: string[]): Promise<Record<string, unknown[]>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = (await c.query(`SELECT row_to_json(t) AS r FROM ${t} t ORDER BY row_to_json(t)::text`)).rows.map((r) => r.r);
    return out;
  } finally {
    await c.end();
  }
}

export async function one<T>(url: string, sql: string): Promise<T | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows[0] as T | undefined;
  } finally {
    await c.end();
  }
}
