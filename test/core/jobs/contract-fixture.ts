// The queue contract's fixture: the same tests (queue-ops, leases, long-poll, retention,
// status-ttl-and-stream-wait) run over the embedded queue (by default: a fresh temp directory) and over
// the PostgreSQL queue (postgres-queue-contract.test.ts calls `usePostgres` first: a fresh schema of
// a real PostgreSQL per fixture). Fake clock and no sweep timer either way; `q` offers only the port
// and `sweep()`, so a contract test cannot lean on one implementation's internals.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedJobQueue, type EmbeddedJobQueueOptions, type JobQueue } from '../../../core/jobs/index.ts';
import { PostgresJobQueue, type PostgresJobQueueOptions } from '../../../core/jobs/postgres-queue.ts';
import { migrate, PgJobRows } from '../../../store/index.ts';
import type { TestPostgres } from '../../harness/postgres.ts';
import { T0 } from './queue-fixture.ts';

export { codeOf, job, T0 } from './queue-fixture.ts';

export type ContractQueue = JobQueue & { sweep(): Promise<void> };
export type ContractOptions = Pick<EmbeddedJobQueueOptions, 'clock' | 'leaseMs' | 'maxLostRetries' | 'maxErrorRetries' | 'retention' | 'sweepIntervalMs'>;

export interface QueueFixture {
  kind: 'embedded' | 'postgres';
  q: ContractQueue;
  /** the fake clock: read with now(), move with advance(ms) */
  now(): number;
  advance(ms: number): void;
  /** closes and opens the queue again on the same state (a clean restart) */
  reopen(extra?: Partial<ContractOptions>): Promise<ContractQueue>;
  /** how many jobs the queue has stored (log records / rows) */
  stored(): Promise<number>;
  /** grows with every durable write: log group commits / the WAL flushed by PostgreSQL */
  durableMark(): Promise<bigint>;
  cleanup(): Promise<void>;
}

let postgres: TestPostgres | undefined;
let schemas = 0;

/** from now on, fixtures open the PostgreSQL queue on this server (undefined: the embedded queue again) */
export function usePostgres(server: TestPostgres | undefined): void {
  postgres = server;
}

export async function openFixture(extra: Partial<ContractOptions> = {}): Promise<QueueFixture> {
  return postgres ? openPostgres(postgres, extra) : openEmbedded(extra);
}

async function openEmbedded(extra: Partial<ContractOptions>): Promise<QueueFixture> {
  const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'gpufleet-jobs-')), 'jobs');
  let t = T0;
  const opts = (more: Partial<ContractOptions>): EmbeddedJobQueueOptions => ({ dir, clock: () => t, sweepIntervalMs: 0, ...extra, ...more });
  let q = await EmbeddedJobQueue.open(opts({}));
  const fx: QueueFixture = {
    kind: 'embedded',
    q,
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    async reopen(more = {}) {
      await q.close();
      fx.q = q = await EmbeddedJobQueue.open(opts(more));
      return q;
    },
    stored: async () => q.logStats().records,
    durableMark: async () => BigInt(q.logStats().commits),
    async cleanup() {
      await q.close();
      await rm(path.dirname(dir), { recursive: true, force: true });
    },
  };
  return fx;
}

async function openPostgres(server: TestPostgres, extra: Partial<ContractOptions>): Promise<QueueFixture> {
  const schema = `contract_${process.pid}_${++schemas}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: server.url, options: `-c search_path=${schema}`, max: 8 });
  pool.on('error', () => undefined);
  // the queue's tables come from the store's migrations (in this schema, by the search path)
  await migrate(pool);
  const rows = new PgJobRows(pool);
  let t = T0;
  const opts = (more: Partial<ContractOptions>): PostgresJobQueueOptions => ({ clock: () => t, sweepIntervalMs: 0, ...extra, ...more });
  let q = await PostgresJobQueue.open(rows, opts({}));
  const fx: QueueFixture = {
    kind: 'postgres',
    q,
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    async reopen(more = {}) {
      await q.close();
      fx.q = q = await PostgresJobQueue.open(rows, opts(more));
      return q;
    },
    stored: async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM gf_jobs')).rows[0]!.n,
    durableMark: async () => BigInt((await pool.query<{ lsn: string }>(`SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::text AS lsn`)).rows[0]!.lsn),
    async cleanup() {
      await q.close();
      await pool.end();
    },
  };
  return fx;
}
