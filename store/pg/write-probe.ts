// The write probe: a small write that learns whether the database takes writes again after one was
// refused because it cannot write (pg-errors.ts, cannotWrite: a full disk, an I/O error, read-only).
// /readyz runs it only while a refusal blocks the store or the job queue, so readiness comes back
// with no request writing.
//
// A write into pages a table already has would pass on a full disk, so the probe makes a table that
// has none: in one transaction it creates gf_write_probe, beside the store's tables (the tablespace of
// gf_pods), with 64 rows of 1000 bytes (about 80 KiB, a group of requests' worth, stored plain), and
// rolls it all back. Creating it writes the catalogs, filling it extends a new file: either fails
// exactly as the store's own writes do (53100 on a full disk, 25006 on a read-only server). Nothing is
// left behind, nothing is committed, no other replica hears of it.
import type pg from 'pg';
import { isUnreachable } from './pg-errors.ts';

/** the probe's table; never committed, so no migration creates it */
export const WRITE_PROBE_TABLE = 'gf_write_probe';

/** Resolves when the write went through (then rolled back); throws the server's refusal otherwise. */
export async function probeDatabaseWrite(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      // two replicas probing at once: the second waits for the first's rollback, a second at most
      await client.query("SET LOCAL lock_timeout = '1s'");
      const { rows } = await client.query<{ spc: string | null }>(
        "SELECT t.spcname AS spc FROM pg_class c JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.oid = to_regclass('gf_pods')",
      );
      const spc = rows[0]?.spc;
      const where = spc ? ` TABLESPACE ${client.escapeIdentifier(spc)}` : '';
      await client.query(`CREATE TABLE ${WRITE_PROBE_TABLE}${where} AS SELECT n, repeat('x', 1000) AS b FROM generate_series(1, 64) AS n`);
    } finally {
      await client.query('ROLLBACK');
    }
  } catch (e) {
    if (isUnreachable(e)) broken = e instanceof Error ? e : new Error(String(e));
    throw e;
  } finally {
    client.release(broken);
  }
}
