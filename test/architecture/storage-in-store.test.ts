// Storage belongs to store/ (issue 20 §1, docs/postgres.md "Where the SQL lives"): no source file
// outside store/ imports the PostgreSQL driver (`pg`), holds DDL (CREATE, ALTER or DROP of a TABLE,
// INDEX or SEQUENCE) or an SQL statement (SELECT … FROM, INSERT INTO, UPDATE … SET, DELETE FROM);
// every table comes from the store's numbered migrations, every statement is the store's. Scanned: every .ts, .js,
// .mjs and .cjs file of the product (each top folder but test/, bench/, docs/, dist/, node_modules/),
// comments included. test/ and bench/ drive the product from outside (they make databases, inspect
// rows, measure a bare table) and are not scanned.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const OUTSIDE = new Set(['test', 'bench', 'docs', 'dist', 'node_modules', '.git', '.ci']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sources(path);
    return /\.(ts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const PG_IMPORT = /\bfrom\s*['"]pg(?:\/[^'"]*)?['"]|\brequire\(\s*['"]pg(?:\/[^'"]*)?['"]\s*\)|\bimport\(\s*['"]pg(?:\/[^'"]*)?['"]\s*\)/;
const DDL = /\b(?:CREATE|ALTER|DROP)\s+(?:UNIQUE\s+|UNLOGGED\s+|TEMP(?:ORARY)?\s+)?(?:TABLE|INDEX|SEQUENCE)\b/;
const STATEMENT = /\bSELECT\b[^;`'"]*?\bFROM\b|\bINSERT\s+INTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+[a-z_][a-z0-9_]*\s+(?:[a-z]\s+)?SET\b/;

/** 'path: what' for each offending file */
function storageOutsideStore(files: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    if (path.startsWith('store/')) continue;
    if (PG_IMPORT.test(text)) out.push(`${path}: imports pg`);
    const ddl = DDL.exec(text);
    if (ddl) out.push(`${path}: DDL (${ddl[0]})`);
    const sql = STATEMENT.exec(text);
    if (sql) out.push(`${path}: SQL (${sql[0].replace(/\s+/g, ' ').slice(0, 40)})`);
  }
  return out;
}

const product = readdirSync(ROOT)
  .filter((name) => !OUTSIDE.has(name) && !name.startsWith('.') && statSync(join(ROOT, name)).isDirectory())
  .flatMap((dir) => sources(join(ROOT, dir)))
  .map((file) => ({ path: relative(ROOT, file), text: readFileSync(file, 'utf8') }));

describe('storage belongs to store/', () => {
  it('scans the product: core, api, cli and store among what it reads', () => {
    const dirs = new Set(product.map((f) => f.path.split('/')[0]));
    for (const d of ['core', 'api', 'cli', 'store', 'fleet', 'model']) expect(dirs.has(d), d).toBe(true);
    expect(product.some((f) => f.path.startsWith('store/pg/') && PG_IMPORT.test(f.text))).toBe(true);
    expect(product.some((f) => f.path.startsWith('store/pg/') && DDL.test(f.text))).toBe(true);
    expect(product.some((f) => f.path.startsWith('store/pg/jobs/') && STATEMENT.test(f.text))).toBe(true);
  });

  it('no file outside store/ imports pg, holds DDL or an SQL statement', () => {
    expect(storageOutsideStore(product)).toEqual([]);
  });

  it('finds each kind of offence when there is one', () => {
    const found = storageOutsideStore([
      { path: 'core/a.ts', text: "import type pg from 'pg';" },
      { path: 'core/b.ts', text: "const pg = require('pg');" },
      { path: 'api/c.ts', text: "const { Pool } = await import('pg');" },
      { path: 'core/d.ts', text: 'await c.query(`CREATE TABLE IF NOT EXISTS x (id int)`);' },
      { path: 'core/e.ts', text: "q('ALTER TABLE x ADD COLUMN y int')" },
      { path: 'cli/f.ts', text: "q('CREATE UNIQUE INDEX x_y ON x (y)')" },
      { path: 'core/g.ts', text: "q('DROP SEQUENCE s')" },
      { path: 'store/pg/h.ts', text: "import pg from 'pg'; q('CREATE TABLE t (n int)')" },
      { path: 'core/i.ts', text: "import { x } from 'pgp'; // creates a table of results, selected from the rows; FOR UPDATE SKIP LOCKED" },
      { path: 'core/j.ts', text: "q('SELECT id FROM gf_jobs WHERE x = $1')" },
      { path: 'core/k.ts', text: "q(`UPDATE gf_jobs j SET status = $2`)" },
      { path: 'api/l.ts', text: "q('DELETE FROM gf_job_stops')" },
      { path: 'cli/m.ts', text: "q('INSERT INTO gf_meta (key) VALUES ($1)')" },
    ]);
    expect(found).toEqual([
      'core/a.ts: imports pg',
      'core/b.ts: imports pg',
      'api/c.ts: imports pg',
      'core/d.ts: DDL (CREATE TABLE)',
      'core/e.ts: DDL (ALTER TABLE)',
      'cli/f.ts: DDL (CREATE UNIQUE INDEX)',
      'core/g.ts: DDL (DROP SEQUENCE)',
      'core/j.ts: SQL (SELECT id FROM)',
      'core/k.ts: SQL (UPDATE gf_jobs j SET)',
      'api/l.ts: SQL (DELETE FROM)',
      'cli/m.ts: SQL (INSERT INTO)',
    ]);
  });
});
