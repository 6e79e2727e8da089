import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startPostgres, type TestPostgres } from './postgres.ts';

describe('test PostgreSQL harness', () => {
  let db: TestPostgres;
  beforeAll(async () => {
    db = await startPostgres();
  }, 120_000);
  afterAll(async () => db?.stop());

  it('creates databases, survives a SIGKILL of the postmaster and keeps committed rows', async () => {
    const url = await db.createDatabase();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('CREATE TABLE t (n int)');
    await c.query('INSERT INTO t VALUES (42)');
    await c.end();
    await db.kill();
    const down = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500 });
    await expect(down.connect()).rejects.toThrow();
    await db.start();
    const again = new pg.Client({ connectionString: url });
    await again.connect();
    expect((await again.query('SELECT n FROM t')).rows).toEqual([{ n: 42 }]);
    await again.end();
  }, 120_000);
});
