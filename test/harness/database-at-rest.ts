// What a PostgreSQL database holds at rest, for the tests that check no secret is stored in clear
// (the embedded store's counterpart is its data directory's files): every row of every table, read
// as text, and the database's own files on the server's disk after a CHECKPOINT, where old row
// versions stay until vacuumed (so a value written in clear and overwritten since is still found).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

/** every row of every table of the database, as `<table>: <row as text>` */
export async function databaseRows(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows: tables } = await c.query<{ name: string }>(
      `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
       WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    const out: string[] = [];
    for (const { name } of tables) {
      const { rows } = await c.query<{ r: string }>(`SELECT t::text AS r FROM ${name} t`);
      for (const { r } of rows) out.push(`${name}: ${r}`);
    }
    return out;
  } finally {
    await c.end();
  }
}

/** the database's files on the server's disk (its directory under base/), written out first */
async function databaseFiles(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let dir: string;
  try {
    await c.query('CHECKPOINT');
    const { rows } = await c.query<{ dir: string }>(
      `SELECT current_setting('data_directory') || '/base/' || oid AS dir FROM pg_database WHERE datname = current_database()`,
    );
    dir = rows[0]!.dir;
  } finally {
    await c.end();
  }
  return (await readdir(dir)).map((f) => path.join(dir, f));
}

/** where any of `secrets` lies in clear in the database: `<table>: <secret>` or `<file>: <secret>` */
export async function databaseLeaks(url: string, secrets: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const row of await databaseRows(url)) {
    for (const s of secrets) if (row.includes(s)) found.add(`${row.slice(0, row.indexOf(':'))}: ${s}`);
  }
  for (const f of await databaseFiles(url)) {
    const text = (await readFile(f)).toString('latin1');
    for (const s of secrets) if (text.includes(s)) found.add(`${f}: ${s}`);
  }
  return [...found];
}
