// The reconcile leases (core/replicas/shared-host-leases.ts on store/pg/replicas/pg-host-leases.ts) against a real PostgreSQL: each replica its
// own pool, as separate processes would have. A replica that stops renewing (stalled, not dead) loses
// its hosts once the lease runs out and its create-path check (confirm) then says no; hosts are shared
// out fairly and shed when a replica joins; racing replicas never both get one host.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { SharedHostLeases } from '../../../core/replicas/index.ts';
import { migrate, PgHostLeaseTable } from '../../../store/pg/index.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';

let server: TestPostgres;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  for (const p of pools.splice(0)) await p.end();
});

async function database(): Promise<string> {
  const url = await server.createDatabase();
  const p = new pg.Pool({ connectionString: url, max: 2 });
  await migrate(p);
  await p.end();
  return url;
}

function replica(url: string, id: string, ttlMs: number): SharedHostLeases {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pools.push(pool);
  return new SharedHostLeases(new PgHostLeaseTable(pool), id, { ttlMs });
}

const hosts = (n: number) => Array.from({ length: n }, (_, i) => `host-${i}`);
const none = new Set<string>();

test('a stalled replica loses its hosts when its leases run out, and its create-path check then says no', async () => {
  const url = await database();
  // leases long enough that the steps between a's sync and b's (a fresh pool's first connection on a
  // loaded machine included), and between b's takeover and a's return, happen well inside them
  const ttlMs = 3000;
  const a = replica(url, 'a', ttlMs);
  const b = replica(url, 'b', ttlMs);
  const all = hosts(4);
  const first = await a.sync(all, none);
  expect(first.held.sort()).toEqual(all);
  expect(first.leader).toBe(true);
  expect(await a.confirm('host-0')).toBe(true);
  // b is alive too: fair share is 2 each, but a's leases are live, so b gets nothing yet, nor the lead
  const second = await b.sync(all, none);
  expect(second.held).toEqual([]);
  expect(second.leader).toBe(false);
  // a stalls (no sync, no confirm) past its leases' lifetime
  await new Promise((r) => setTimeout(r, ttlMs + 200));
  const taken = await b.sync(all, none);
  // a is no longer alive either (its replica row is as old as its leases): b takes every host, and the lead
  expect(taken.taken.sort()).toEqual(all);
  expect(taken.leader).toBe(true);
  expect((await a.sync([], none)).leader).toBe(false);
  expect(await a.confirm('host-0')).toBe(false);
  expect(await b.confirm('host-0')).toBe(true);
  // a comes back: b keeps what it holds, a gets its share only as b sheds its excess
  expect((await a.sync(all, none)).held).toEqual([]);
  const shed = await b.sync(all, none);
  expect(shed.released).toHaveLength(2);
  expect((await a.sync(all, none)).held).toHaveLength(2);
});

test('three replicas share 30 hosts 10 each; a host with a pass in flight is not shed', async () => {
  const url = await database();
  const all = hosts(30);
  const a = replica(url, 'a', 5000);
  expect((await a.sync(all, none)).held).toHaveLength(30);
  const b = replica(url, 'b', 5000);
  const c = replica(url, 'c', 5000);
  await b.sync(all, none);
  await c.sync(all, none);
  // a sees three live replicas: it keeps 10 and the busy one
  const busy = new Set(['host-29']);
  const ra = await a.sync(all, busy);
  expect(ra.held).toHaveLength(10);
  expect(ra.held).toContain('host-29');
  const rb = await b.sync(all, none);
  const rc = await c.sync(all, none);
  expect(rb.held).toHaveLength(10);
  expect(rc.held).toHaveLength(10);
  expect(new Set([...ra.held, ...rb.held, ...rc.held]).size).toBe(30);
});

test('replicas racing for the same free hosts never both get one', async () => {
  const url = await database();
  const all = hosts(200);
  const rs = Array.from({ length: 4 }, (_, i) => replica(url, `r${i}`, 5000));
  // register all four as alive first, so each asks for a quarter of them (rounded up) at once
  await Promise.all(rs.map((r) => r.sync([], none)));
  const results = await Promise.all(rs.map((r) => r.sync(all, none)));
  const taken = results.flatMap((r) => r.taken);
  expect(new Set(taken).size).toBe(taken.length);
  for (const r of results) expect(r.held.length).toBeLessThanOrEqual(50);
  const rows = await pools[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM gf_host_leases');
  expect(rows.rows[0]!.n).toBe(taken.length);
});

test('a sync is one checkout of the pool, whatever it does (renew, shed, take, lead)', async () => {
  const url = await database();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pools.push(pool);
  let checkouts = 0;
  pool.on('acquire', () => void checkouts++);
  const a = new SharedHostLeases(new PgHostLeaseTable(pool), 'a', { ttlMs: 5000 });
  const counted = async (run: () => Promise<unknown>): Promise<number> => {
    checkouts = 0;
    await run();
    return checkouts;
  };
  // takes all 6, then renews them; b joins and a sheds 3; a host gone is dropped
  expect(await counted(() => a.sync(hosts(6), none))).toBe(1);
  expect(await counted(() => a.sync(hosts(6), none))).toBe(1);
  await replica(url, 'b', 5000).sync([], none);
  const shed = await a.sync(hosts(6), none);
  expect(shed.released).toHaveLength(3);
  expect(await counted(() => a.sync(hosts(5), none))).toBe(1);
});
