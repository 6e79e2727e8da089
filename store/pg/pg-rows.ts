// Rows of the collection tables and the records they hold. A row is (id, rev, data): `data` is the
// record's disk form (sealed fields as ciphertext, exactly as the embedded store writes them) and `rev`
// the transaction that wrote it. Decoding (JSON, then opening sealed fields) is kept per id and rev,
// so a record read again unchanged costs no decryption; every read still asks the database.
import { deepFreeze, type AnyRecord } from '../base/memory-table.ts';
import type { RecordCodec, StoredRecord } from '../base/record-codec.ts';
import { fieldLiteral, tableOf } from './pg-schema.ts';
import { unstorable } from './storable-text.ts';

export interface Row {
  id: string;
  /** bigint, as text */
  rev: string;
  /** jsonb, as text */
  data: string;
}

export const keyOf = (c: string, id: string): string => `${c}\u0000${id}`;

export const ROW_COLUMNS = 'id, rev::text AS rev, data::text AS data';

export class RowCache {
  private readonly decoded = new Map<string, { rev: number; rec: AnyRecord }>();

  constructor(readonly codec: RecordCodec) {}

  decode(c: string, row: Row): AnyRecord {
    const key = keyOf(c, row.id);
    const rev = Number(row.rev);
    const hit = this.decoded.get(key);
    if (hit && hit.rev === rev) return hit.rec;
    const { rec } = this.codec.decode(c, JSON.parse(row.data) as StoredRecord, `postgres ${tableOf(c)}`);
    const frozen = deepFreeze(rec as AnyRecord);
    if (!hit || hit.rev < rev) this.decoded.set(key, { rev, rec: frozen });
    return frozen;
  }

  /** a version this process wrote (its disk form is already known to the codec) */
  remember(c: string, id: string, rev: number, rec: AnyRecord): void {
    const hit = this.decoded.get(keyOf(c, id));
    if (!hit || hit.rev < rev) this.decoded.set(keyOf(c, id), { rev, rec });
  }

  forget(c: string, id: string): void {
    this.decoded.delete(keyOf(c, id));
  }
}

/** The equality filter of `list`/`count` as SQL over the collection's table (indexed fields use their index). */
export function whereSql(where: Record<string, unknown> | undefined, firstParam = 1): { sql: string; values: string[]; entries: [string, unknown][] } {
  const entries = Object.entries(where ?? {}).filter(([, v]) => v !== undefined);
  // a value no stored record can hold matches none (and jsonb would refuse it as a parameter)
  if (entries.some(([, v]) => unstorableIn(v))) return { sql: ' WHERE false', values: [], entries };
  const sql = entries.map(([k], i) => `data -> ${fieldLiteral(k)} = $${i + firstParam}::jsonb`).join(' AND ');
  return { sql: sql ? ` WHERE ${sql}` : '', values: entries.map(([, v]) => JSON.stringify(v)), entries };
}

export function selectSql(c: string, where: Record<string, unknown> | undefined): { text: string; values: string[]; entries: [string, unknown][] } {
  const w = whereSql(where);
  return { text: `SELECT ${ROW_COLUMNS} FROM ${tableOf(c)}${w.sql} ORDER BY ord`, values: w.values, entries: w.entries };
}

export function countSql(c: string, where: Record<string, unknown> | undefined): { text: string; values: string[] } {
  const w = whereSql(where);
  return { text: `SELECT count(*)::int AS n FROM ${tableOf(c)}${w.sql}`, values: w.values };
}

const unstorableIn = (v: unknown): boolean =>
  typeof v === 'string' ? unstorable(v) : v !== null && typeof v === 'object' && Object.entries(v).some(([k, x]) => unstorable(k) || unstorableIn(x));

/** an id no stored record can have (a NUL cannot even be sent as a text parameter) */
export const impossibleId = (id: string): boolean => id.includes('\u0000');

export type { StoredRecord };
