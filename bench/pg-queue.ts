// Job queue on PostgreSQL (core/jobs/postgres-queue.ts) against the embedded queue, in one run, no HTTP:
// JOBS jobs through enqueue → take → complete with WORKERS workers (each long-polls take, then
// completes) and IN_FLIGHT producers, fsync on for both (the embedded log's fdatasync; PostgreSQL's
// own cluster from test/harness/postgres.ts, fsync on, synchronous_commit on). ROUNDS rounds alternate
// the order; the ratio is the median of the pairs. Also the cross-replica take wake-up: a worker
// waits in take on replica B, a job is enqueued on replica A (LISTEN/NOTIFY).
// There is no floor in issue 12 for the throughput: it is printed as information (`info:` lines),
// not as a `target:`; the one `target:` is the cross-replica wake-up (p50 ≤ 100 ms). What to expect: every job costs the embedded queue about three log records
// in shared fdatasyncs; on PostgreSQL it is three transactions (enqueue, take, complete: one statement
// each in the common case, each commit a WAL flush that concurrent commits share), plus the server's
// own CPU on the same cores. So the queue is also measured against its own floor in the same run:
// three bare one-row INSERT commits a job on the same database, the same concurrency.
//   npx tsx bench/pg-queue.ts
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedJobQueue, PostgresJobQueue, type JobQueue } from '../core/index.ts';
import { migrate, PgJobRows } from '../store/index.ts';
import { startPostgres } from '../test/harness/postgres.ts';
import { checkTarget } from './target.ts';
import type { Job } from '../model/index.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 10);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WAKE_SAMPLES = Number(process.env.BENCH_WAKE_SAMPLES ?? 200);
const INPUT = { prompt: 'a photo of an astronaut riding a horse on the moon, 4k, detailed', steps: 30, seed: 42, pad: 'x'.repeat(120) };
const OUTPUT = { image_url: 'https://example.invalid/results/0f8a1c7e-3b8f-4c55-9a8b-5b3e0e6c9d11.png', seed: 42, pad: 'y'.repeat(120) };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function throughput(q: JobQueue, endpointId: string): Promise<number> {
  let produced = 0;
  let completed = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const t = performance.now();
  const producer = async () => {
    while (produced < JOBS) {
      produced++;
      await q.enqueue({ endpointId, accountId: 'acct', input: INPUT, sync: false });
    }
  };
  const worker = async (w: string) => {
    while (completed < JOBS) {
      const jobs: Job[] = await q.take(endpointId, w, { waitMs: 200 });
      for (const j of jobs) {
        await q.complete(j.id, w, { output: OUTPUT });
        if (++completed === JOBS) finished();
      }
    }
  };
  const workers = Array.from({ length: WORKERS }, (_, i) => worker(`w-${i}`));
  await Promise.all(Array.from({ length: IN_FLIGHT }, producer));
  await allDone;
  const perSecond = JOBS / ((performance.now() - t) / 1000);
  await Promise.all(workers);
  return perSecond;
}

/** the floor under any PostgreSQL queue: a job's three commits as bare one-row INSERTs, the same concurrency */
async function bareCommits(pool: pg.Pool): Promise<number> {
  await pool.query('CREATE TABLE IF NOT EXISTS bench_bare (id bigserial PRIMARY KEY, body json NOT NULL)');
  const body = JSON.stringify({ INPUT, OUTPUT });
  let left = JOBS * 3;
  const t = performance.now();
  await Promise.all(Array.from({ length: WORKERS + IN_FLIGHT }, async () => {
    while (left-- > 0) await pool.query('INSERT INTO bench_bare (body) VALUES ($1::json)', [body]);
  }));
  return JOBS / ((performance.now() - t) / 1000);
}

function newPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 24 });
  pool.on('error', () => undefined);
  return pool;
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-pgq-'));
  const server = await startPostgres();
  try {
    const url = await server.createDatabase();
    const pool = newPool(url);
    await migrate(pool);
    const pgq = await PostgresJobQueue.open(new PgJobRows(pool));
    const embedded: number[] = [];
    const postgres: number[] = [];
    const bare: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const runEmbedded = async () => {
        const q = await EmbeddedJobQueue.open({ dir: path.join(root, `q-${r}`) });
        try {
          return await throughput(q, 'ep-bench');
        } finally {
          await q.close();
        }
      };
      const runPostgres = () => throughput(pgq, `ep-bench-${r}`);
      let e: number;
      let p: number;
      if (r % 2 === 0) {
        e = await runEmbedded();
        p = await runPostgres();
      } else {
        p = await runPostgres();
        e = await runEmbedded();
      }
      const b = await bareCommits(pool);
      embedded.push(e);
      postgres.push(p);
      bare.push(b);
      ratios.push(p / e);
      console.log(`round ${r + 1}: embedded ${e.toFixed(0)} jobs/s, postgres ${p.toFixed(0)} jobs/s, ratio ${(p / e).toFixed(3)}; bare PostgreSQL (3 INSERT commits a job) ${b.toFixed(0)} jobs/s`);
    }
    const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    console.log(`throughput (${JOBS} jobs, ${WORKERS} workers, ${IN_FLIGHT} producers, fsync on): embedded median ${median(embedded).toFixed(0)} jobs/s (${spread(embedded)}), postgres median ${median(postgres).toFixed(0)} jobs/s (${spread(postgres)})`);

    // cross-replica wake-up: B waits in take, A enqueues
    const poolB = newPool(url);
    const b = await PostgresJobQueue.open(new PgJobRows(poolB));
    const wake: number[] = [];
    for (let i = 0; i < WAKE_SAMPLES; i++) {
      const taking = b.take('ep-wake', 'w-b', { waitMs: 10_000 });
      await new Promise((res) => setTimeout(res, 2));
      const t0 = performance.now();
      await pgq.enqueue({ endpointId: 'ep-wake', accountId: 'acct', input: { i }, sync: false });
      const [got] = await taking;
      wake.push(performance.now() - t0);
      if (got) await b.complete(got.id, 'w-b', { output: i });
    }
    await b.close();
    await poolB.end();
    await pgq.close();
    await pool.end();
    console.log(`info: postgres queue jobs/s vs embedded (median of ${ROUNDS} rounds): ${median(ratios).toFixed(3)}× (rounds ${ratios.map((x) => x.toFixed(3)).join(', ')}; no floor in issue 12)`);
    console.log(`info: postgres queue jobs/s vs bare PostgreSQL commits (3 one-row INSERTs a job, same concurrency): ${(median(postgres) / median(bare)).toFixed(3)}× (bare median ${median(bare).toFixed(0)} jobs/s, ${spread(bare)})`);
    console.log(`info: cross-replica take wake-up (enqueue on A → take on B resolves): p50 ${pct(wake, 50).toFixed(2)} ms, p99 ${pct(wake, 99).toFixed(2)} ms`);
    // the one floor here: issue 12's "reaches a worker waiting on another replica at once", read as well under 100 ms
    checkTarget({ name: 'cross-replica take wake-up p50', value: pct(wake, 50), op: '<=', floor: 100, unit: ' ms' });
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
