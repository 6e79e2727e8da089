// The job history's page on PostgreSQL (store/pg/jobs/statements.ts `listJobs`, migration 5
// gf_jobs_history): on a real cluster with 12,000 retained jobs of one endpoint (two accounts), the
// page query's plan (EXPLAIN ANALYZE of the exact statement and parameters listJobs sends) is an index
// scan of gf_jobs_history with no Sort node that reads no more rows than the page, on the first page
// and after a cursor; the same plan with the index dropped (inside a transaction rolled back) sorts,
// so the check fails without the migration. Bodies are read only when asked.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { migrate } from '../../store/pg/pg-schema.ts';
import { listJobs, type Query } from '../../store/pg/jobs/statements.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';

let server: TestPostgres;
let pool: pg.Pool;
const NOW = 1_800_000_000_000;
const N = 12_000;

beforeAll(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: await server.createDatabase('history'), max: 2 });
  await migrate(pool);
  // jobs of ep-a for two accounts (every third one the other's), and 2,000 of another endpoint; each with a body worth detoasting
  await pool.query(
    `INSERT INTO gf_jobs (id, endpoint_id, account_id, input, execution_timeout, ttl, low_priority, sync, status, created_at, queued_at,
                         finished_at, output, retries, auto_retries, expires_at, lane, seq)
     SELECT 'job-' || lpad(g::text, 6, '0'), CASE WHEN g <= $1 THEN 'ep-a' ELSE 'ep-b' END, CASE WHEN g % 3 = 0 THEN 'other' ELSE 'me' END,
            json_build_object('prompt', repeat('x', 3000)), 600000, 86400000, false, false, 'COMPLETED', $2::bigint + g * 10, $2::bigint + g * 10,
            $2::bigint + g * 10 + 5, json_build_object('text', repeat('y', 3000)), 0, 0, $3::bigint, 1, g
     FROM generate_series(1, $1 + 2000) g`,
    [N, NOW - 10_000_000, NOW + 3_600_000],
  );
  await pool.query('ANALYZE gf_jobs');
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Actual Rows'?: number; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** the statement and parameters listJobs sends, run under EXPLAIN ANALYZE on `c` */
async function planOf(c: pg.ClientBase | pg.Pool, filter: Parameters<typeof listJobs>[1]): Promise<PlanNode[]> {
  let sent: { sql: string; params: unknown[] } | undefined;
  const capture: Query = async (sql, params) => {
    sent = { sql, params };
    return { rows: [] } as never;
  };
  await listJobs(capture, filter, NOW);
  const { rows } = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent!.sql}`, sent!.params);
  return nodes(rows[0]!['QUERY PLAN'][0].Plan);
}

const q: Query = (sql, params) => pool.query(sql, params);

test('a page and the page after a cursor are read from gf_jobs_history in order: no Sort, no more rows than the page', async () => {
  const first = await planOf(pool, { endpointId: 'ep-a', accountId: 'me', limit: 21 });
  expect(first.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(first.map((n) => n['Node Type'])).not.toContain('Seq Scan');
  const scan = first.find((n) => n['Index Name'] === 'gf_jobs_history')!;
  expect(scan, JSON.stringify(first)).toBeDefined();
  expect(scan['Actual Rows']).toBeLessThanOrEqual(21);

  const page = await listJobs(q, { endpointId: 'ep-a', accountId: 'me', limit: 21 }, NOW);
  expect(page).toHaveLength(21);
  const last = page.at(-1)!;
  const next = await planOf(pool, { endpointId: 'ep-a', accountId: 'me', limit: 21, after: { createdAt: last.createdAt, id: last.id } });
  expect(next.map((n) => n['Node Type'])).not.toContain('Sort');
  const scan2 = next.find((n) => n['Index Name'] === 'gf_jobs_history')!;
  expect(scan2, JSON.stringify(next)).toBeDefined();
  expect(scan2['Actual Rows']).toBeLessThanOrEqual(21);
});

test('without the index (dropped in a transaction rolled back) the same query sorts the endpoint: the check above depends on migration 5', async () => {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('DROP INDEX gf_jobs_history');
    const plan = await planOf(c, { endpointId: 'ep-a', accountId: 'me', limit: 21 });
    expect(plan.map((n) => n['Node Type'])).toContain('Sort');
    expect(plan.some((n) => n['Index Name'] === 'gf_jobs_history')).toBe(false);
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
});

test('bodies are read only when asked: a page without ?include has no input, output or error; with it, they are there', async () => {
  const bare = await listJobs(q, { endpointId: 'ep-a', accountId: 'me', limit: 3 }, NOW);
  expect(bare.map((j) => j.id)).toEqual(['job-011999', 'job-011998', 'job-011996']);
  for (const j of bare) {
    expect(j.input).toBeNull();
    expect(j.output).toBeUndefined();
    expect(j.status).toBe('COMPLETED');
  }
  const full = await listJobs(q, { endpointId: 'ep-a', accountId: 'me', limit: 3, bodies: new Set(['input', 'output']) }, NOW);
  expect(full.map((j) => j.id)).toEqual(bare.map((j) => j.id));
  for (const j of full) {
    expect((j.input as { prompt: string }).prompt).toHaveLength(3000);
    expect((j.output as { text: string }).text).toHaveLength(3000);
  }
});
