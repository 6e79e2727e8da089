// Several control-plane replicas on one PostgreSQL database (docs/scale.md), in one run:
// 1. API mutations per second with 10,000 pods stored (PATCH, stop, start per pod, as bench/store.ts),
//    each control plane its own `gpufleet serve` process: the embedded store; PostgreSQL with one
//    replica; PostgreSQL with three, the same load spread over them. Target: 3 replicas ≥ 1.0× one
//    (on this machine the replicas, the database and the load generator share the same cores).
// 2. A simulated fleet of 1,000 hosts (bench/replica-fleet.ts: the real reconcile loop and leases,
//    in-process fake hosts answering after SSH_MS): time for every host to be reconciled once after a
//    commit that changes all of them, with the embedded store and with 1 and 3 replicas. Printed.
//   npx tsx bench/replicas.ts
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runLoad, type LoadRequest } from './http-load.ts';
import { fleetRound } from './replica-fleet.ts';
import { checkTarget } from './target.ts';
import { freePort, spawnControlPlane, startTestControlPlane, type SpawnedControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { startPostgres } from '../test/harness/postgres.ts';
import { TEST_SECRET_KEY } from '../test/harness/test-store.ts';

const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const MUTATIONS = Number(process.env.BENCH_MUTATIONS ?? 3_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 30);
const FLEET = Number(process.env.BENCH_FLEET_HOSTS ?? 1_000);
const SSH_MS = Number(process.env.BENCH_SSH_MS ?? 20);
const LIMITS = 'minute=100000000,hour=100000000,day=100000000';
const TARGET = 1.0;

type Op = 'patch' | 'stop' | 'start';
/** BENCH_OPS=patch: PATCH only (no re-placement), to tell the store's cost from placement conflicts */
const OPS = (process.env.BENCH_OPS?.split(',') ?? ['patch', 'stop', 'start']) as Op[];
let serial = 0;
const lane = (id: string): LoadRequest[] =>
  OPS.map((op) =>
    op === 'patch'
      ? { method: 'PATCH', path: `/v2/pods/${id}`, body: JSON.stringify({ args: `sleep ${++serial}`, env: { RUN: String(serial) } }), expect: 200 }
      : { method: 'POST', path: `/v2/pods/${id}/action`, body: JSON.stringify({ action: op }), expect: 200 },
  );

/** 4 CPU hosts and PODS pods through the pod service of an in-process control plane on the store; answers the pods and a key */
async function seed(config: { dataDir?: string; databaseUrl?: string }): Promise<{ ids: string[]; key: string }> {
  const cp = await startTestControlPlane({
    ...(config.dataDir ? { dataDir: config.dataDir } : {}),
    rateLimits: LIMITS,
    config: config.databaseUrl ? { databaseUrl: config.databaseUrl, secretKey: TEST_SECRET_KEY } : {},
  });
  try {
    await seedHosts(cp.services.store, Array.from({ length: 4 }, (_, i) => ({ id: `cpu-${i}`, gpus: 0, cpuCount: 1_000_000, memoryGb: 10_000_000, diskFreeGb: 100_000_000 })));
    const { key } = await cp.newAccount('read_write');
    const principal = await cp.services.keys.authenticate(`Bearer ${key}`);
    const ids: string[] = [];
    for (let i = 0; i < PODS; i += 200) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(200, PODS - i) }, (_, j) =>
          cp.services.pods.create(principal, { name: `bench-${i + j}`, image: 'busybox:1.36', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }),
        ),
      );
      for (const { pod } of batch) ids.push(pod.id);
    }
    return { ids, key };
  } finally {
    await cp.close();
  }
}

const dirs: string[] = [];
const procs: SpawnedControlPlane[] = [];
async function serve(dataDir: string | null, env: Record<string, string> = {}): Promise<SpawnedControlPlane> {
  const dir = dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-replica-')));
  if (!dataDir) dirs.push(dir);
  const cp = await spawnControlPlane({ dataDir: dir, port: await freePort(), env: { GPUFLEET_RATE_LIMITS: LIMITS, GPUFLEET_PROVISIONER: 'off', ...env } });
  procs.push(cp);
  return cp;
}

/** The lanes spread over the replicas (IN_FLIGHT in flight in all), after a warm-up on each. */
async function measure(urls: string[], key: string, ids: string[], offset: number): Promise<{ perSecond: number; p50: number; p99: number; seconds: number }> {
  const headers = { authorization: `Bearer ${key}` };
  await Promise.all(urls.map((url, i) => runLoad({ url, headers, concurrency: 8, lanes: ids.slice(i * 16, i * 16 + 16).map((id) => lane(id).slice(0, 1)) })));
  const lanes = Array.from({ length: Math.ceil(MUTATIONS / OPS.length) }, (_, i) => lane(ids[(offset + i) % ids.length]!));
  const per = Math.max(1, Math.floor(IN_FLIGHT / urls.length));
  const t = performance.now();
  const results = await Promise.all(urls.map((url, i) => runLoad({ url, headers, concurrency: per, lanes: lanes.filter((_, j) => j % urls.length === i) })));
  const seconds = (performance.now() - t) / 1000;
  const done = results.reduce((n, r) => n + r.done, 0);
  return { perSecond: done / seconds, seconds, p50: Math.max(...results.map((r) => r.p50)), p99: Math.max(...results.map((r) => r.p99)) };
}

/** commits and rollbacks (serialisation failures run again are rollbacks) of the database so far */
async function txStats(url: string): Promise<{ commits: number; rollbacks: number }> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ c: string; r: string }>('SELECT xact_commit::text AS c, xact_rollback::text AS r FROM pg_stat_database WHERE datname = current_database()');
    return { commits: Number(r.rows[0]?.c ?? 0), rollbacks: Number(r.rows[0]?.r ?? 0) };
  } finally {
    await c.end();
  }
}

async function analyze(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('ANALYZE');
  } finally {
    await c.end();
  }
}

const fmt = (r: { perSecond: number; p50: number; p99: number }) => `${r.perSecond.toFixed(0)}/s (p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms)`;

async function main(): Promise<void> {
  const pg = await startPostgres();
  try {
    // 1. mutations/s with PODS pods
    const embeddedDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-embedded-'));
    dirs.push(embeddedDir);
    let t = performance.now();
    const e = await seed({ dataDir: embeddedDir });
    console.error(`setup: ${PODS} pods in the embedded store in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const embedded = await serve(embeddedDir);
    const emb = await measure([embedded.url], e.key, e.ids, 100);
    await embedded.kill('SIGTERM');

    const url = await pg.createDatabase();
    t = performance.now();
    const p = await seed({ databaseUrl: url });
    console.error(`setup: ${PODS} pods in PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    // statistics for the planner, as autovacuum would gather them a minute later: without them a
    // filtered read may scan a whole table, and under SERIALIZABLE that conflicts with every write to it
    if (process.env.BENCH_ANALYZE !== '0') await analyze(url);
    const env = { GPUFLEET_DATABASE_URL: url, GPUFLEET_SECRET_KEY: TEST_SECRET_KEY.toString('base64') };
    const r0 = await serve(null, env);
    const s0 = await txStats(url);
    const one = await measure([r0.url], p.key, p.ids, 100);
    const more = [await serve(null, env), await serve(null, env)];
    const s1 = await txStats(url);
    const three = await measure([r0.url, ...more.map((r) => r.url)], p.key, p.ids, 100 + MUTATIONS);
    const s2 = await txStats(url);
    // pg_stat_database is updated when a backend reports (about every 500 ms, and at its end): approximate
    console.error(
      `  PostgreSQL transactions rolled back (serialisation failures run again, among others) during the run: ` +
        `1 replica ${s1.rollbacks - s0.rollbacks} of ${s1.commits - s0.commits + s1.rollbacks - s0.rollbacks}, ` +
        `3 replicas ${s2.rollbacks - s1.rollbacks} of ${s2.commits - s1.commits + s2.rollbacks - s1.rollbacks}`,
    );
    for (const r of [r0, ...more]) await r.kill('SIGTERM');
    console.log(
      `replicas: mutations with ${PODS} pods, ${IN_FLIGHT} in flight: embedded ${fmt(emb)}; PostgreSQL 1 replica ${fmt(one)} (${(one.perSecond / emb.perSecond).toFixed(2)}× embedded); ` +
        `3 replicas ${fmt(three)} (${(three.perSecond / one.perSecond).toFixed(2)}× one replica)`,
    );

    // 2. a fleet of FLEET hosts reconciled once after a change
    const fleet: string[] = [];
    const base = await fleetRound({ replicas: 1, hosts: FLEET, latencyMs: SSH_MS });
    fleet.push(`embedded ${base.seconds.toFixed(2)} s`);
    const f1 = await fleetRound({ databaseUrl: await pg.createDatabase(), secretKey: TEST_SECRET_KEY, replicas: 1, hosts: FLEET, latencyMs: SSH_MS });
    fleet.push(`PostgreSQL 1 replica ${f1.seconds.toFixed(2)} s (cold start ${f1.settleSeconds.toFixed(2)} s)`);
    const f3 = await fleetRound({ databaseUrl: await pg.createDatabase(), secretKey: TEST_SECRET_KEY, replicas: 3, hosts: FLEET, latencyMs: SSH_MS });
    fleet.push(`3 replicas ${f3.seconds.toFixed(2)} s (hosts held ${f3.held.join('/')}, cold start ${f3.settleSeconds.toFixed(2)} s; ${(f1.seconds / f3.seconds).toFixed(2)}× faster than one)`);
    console.log(`replicas: ${FLEET} simulated hosts (${SSH_MS} ms per SSH round trip), every host reconciled once after one commit changing all: ${fleet.join('; ')}`);

    checkTarget({ name: `mutations/s at ${PODS} pods, 3 PostgreSQL replicas vs 1`, value: three.perSecond / one.perSecond, op: '>=', floor: TARGET, unit: '×' });
  } finally {
    for (const c of procs) await c.kill('SIGTERM').catch(() => undefined);
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    await pg.stop();
  }
}

await main();
