// A replica's host-lease sync round (core/replicas/shared-host-leases.ts on store/pg/replicas/
// pg-host-leases.ts): its statements on one connection checked out once per round (`round`), against
// the same statements each checking a connection out of the pool by itself (one checkout per
// statement, as before issue 20's review: 7 on a first round that takes hosts, 4 on a steady one), in one
// run on one PostgreSQL (test/harness/postgres.ts). Each side has its own database and HOSTS hosts;
// ROUNDS sync rounds each, alternating. Twice: the pool idle, then the pool shared with BUSY loops of
// short queries (as a replica's pool is, with the store's and the job queue's statements), where a
// checkout waits its turn. No floor: printed as `info:` lines.
//   npx tsx bench/host-leases.ts
import pg from 'pg';
import { SharedHostLeases } from '../core/index.ts';
import { migrate, PgHostLeaseTable, type HostLeaseRound, type HostLeaseTable } from '../store/index.ts';
import { startPostgres } from '../test/harness/postgres.ts';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const BUSY = Number(process.env.BENCH_BUSY ?? 8);
const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 4);

/** the same statements, each on a connection of its own: one checkout per statement */
function perStatement(pool: pg.Pool): HostLeaseTable {
  const table = new PgHostLeaseTable(pool);
  const each = new Proxy({} as HostLeaseRound, {
    get: (_t, name: keyof HostLeaseRound) => (...args: unknown[]) => table.round((r) => (r[name] as (...a: unknown[]) => Promise<unknown>)(...args)),
  });
  return { round: (fn) => fn(each), confirm: (...a) => table.confirm(...a), leave: (...a) => table.leave(...a) };
}

const server = await startPostgres();
try {
  const hosts = Array.from({ length: HOSTS }, (_, i) => `host-${i}`);
  const side = async (name: string, make: (pool: pg.Pool) => HostLeaseTable) => {
    const pool = new pg.Pool({ connectionString: await server.createDatabase(), max: POOL_MAX });
    await migrate(pool);
    let checkouts = 0;
    pool.on('acquire', () => void checkouts++);
    return { name, pool, leases: new SharedHostLeases(make(pool), name), checkouts: () => checkouts };
  };
  const sides = [await side('one checkout a round', (p) => new PgHostLeaseTable(p)), await side('one checkout a statement', perStatement)];
  const none = new Set<string>();
  for (const s of sides) await s.leases.sync(hosts, none); // takes every host

  for (const busy of [0, BUSY]) {
    let stop = false;
    const load = sides.flatMap((s) => Array.from({ length: busy }, async () => {
      while (!stop) await s.pool.query('SELECT pg_sleep(0.001)');
    }));
    const ms = sides.map(() => [] as number[]);
    const before = sides.map((s) => s.checkouts());
    for (let i = 0; i < ROUNDS; i++) {
      for (const [k, s] of (i % 2 ? [...sides].reverse() : sides).entries()) {
        const t = performance.now();
        await s.leases.sync(hosts, none);
        ms[i % 2 ? sides.length - 1 - k : k]!.push(performance.now() - t);
      }
    }
    stop = true;
    await Promise.all(load);
    const when = busy ? `pool of ${POOL_MAX} shared with ${busy} query loops` : 'pool idle';
    const p50 = ms.map((m) => [...m].sort((a, b) => a - b)[Math.floor(m.length / 2)]!);
    sides.forEach((s, i) => {
      const rounds = ms[i]!.length;
      // with the load on, the pool's checkouts are the load's too: counted only while it is idle
      const checkouts = busy ? '' : `, ${((s.checkouts() - before[i]!) / rounds).toFixed(1)} checkouts a round`;
      console.log(`info: ${when}: ${s.name}: sync p50 ${p50[i]!.toFixed(2)} ms, mean ${(ms[i]!.reduce((a, b) => a + b, 0) / rounds).toFixed(2)} ms${checkouts}`);
    });
    console.log(`info: ${when}: p50 ratio one-a-round / one-a-statement ${(p50[0]! / p50[1]!).toFixed(2)}×`);
  }
  for (const s of sides) await s.pool.end();
} finally {
  await server.stop();
}
