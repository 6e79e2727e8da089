// The store journal's records: one transaction per line, in the one line format of store/log/
// (`<crc32> <JSON>\n`, line-format.ts), the JSON being `{"seq":n,"ops":[{c,id,v}]}`. Lines that
// begin with `{` are the earlier, unchecked format: still read (a data directory written by an older
// version must open), never written.
import { decodeLine, encodeLine } from '../log/line-format.ts';

export interface JournalOp {
  c: string;
  id: string;
  /** the record as stored on disk (sealed fields sealed), or null for a delete */
  v: unknown;
}

export interface JournalEntry {
  seq: number;
  ops: JournalOp[];
}

export type ParsedRecord = { ok: true; entry: JournalEntry; legacy: boolean } | { ok: false; reason: string; checksum: boolean };

/** one entry as its journal line, the newline included */
export function encodeEntry(entry: JournalEntry): Buffer {
  return encodeLine(entry);
}

/** the line as text (tests and tools write journal lines of their own) */
export function formatRecord(entry: JournalEntry): string {
  return encodeEntry(entry).toString('utf8');
}

/** Parses one line (without its `\n`) and checks it: checksum, JSON, and the shape of an entry. */
export function parseRecord(line: Buffer): ParsedRecord {
  const d = decodeLine(line, { legacy: true });
  if (!d.ok) return d;
  if (!isEntry(d.value)) return { ok: false, reason: 'not a journal entry (seq and ops expected)', checksum: false };
  return { ok: true, entry: d.value, legacy: d.legacy };
}

function isEntry(v: unknown): v is JournalEntry {
  if (!v || typeof v !== 'object') return false;
  const e = v as Record<string, unknown>;
  if (!Number.isSafeInteger(e.seq) || (e.seq as number) < 1 || !Array.isArray(e.ops)) return false;
  return e.ops.every((op: unknown) => {
    if (!op || typeof op !== 'object') return false;
    const o = op as Record<string, unknown>;
    return typeof o.c === 'string' && typeof o.id === 'string' && (o.v === null || (typeof o.v === 'object' && !Array.isArray(o.v)));
  });
}
