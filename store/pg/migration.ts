// One numbered migration of the PostgreSQL schema (pg-schema.ts applies them in order, each once,
// each in one transaction, recorded in gf_schema_migrations).
import type pg from 'pg';

export interface Migration {
  version: number;
  name: string;
  /** a check inside the migration's transaction, before its statements: throws to refuse the migration */
  check?: (c: pg.ClientBase) => Promise<void>;
  /** one script, or statements run one after another in the same transaction */
  sql: string | readonly string[];
}

/** a test's window into a running migration: called after each of its statements, inside its transaction */
export type AfterStatement = (version: number, statement: number) => Promise<void>;
