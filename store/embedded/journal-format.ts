// One journal record per line: `<crc32 of the JSON, 8 hex digits> <JSON>\n`. The checksum is what
// lets replay tell a damaged record from a good one, so damage is reported instead of read as the
// end of the journal. Lines that begin with `{` are the earlier, unchecked format: still read (a data
// directory written by an older version must open), never written.
import zlib from 'node:zlib';

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

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

function tableCrc32(buf: Uint8Array): number {
  let c = -1;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** CRC-32 (IEEE, as zlib and gzip) of `buf`; zlib.crc32 exists from Node 20.15 on */
export const crc32: (buf: Uint8Array) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (buf) => zlib.crc32(buf) : tableCrc32;

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

export function formatRecord(entry: JournalEntry): string {
  const json = JSON.stringify(entry);
  return `${hex8(crc32(Buffer.from(json, 'utf8')))} ${json}\n`;
}

const HEADER = /^[0-9a-f]{8} $/;

/** Parses one line (without its `\n`) and checks it: checksum, JSON, and the shape of an entry. */
export function parseRecord(line: Buffer): ParsedRecord {
  let json: Buffer;
  let legacy = false;
  if (line[0] === 0x7b /* { */) {
    json = line;
    legacy = true;
  } else {
    const header = line.subarray(0, 9).toString('latin1');
    if (!HEADER.test(header)) return { ok: false, reason: 'not a journal record (no checksum header)', checksum: false };
    json = line.subarray(9);
    const want = Number.parseInt(header, 16);
    const got = crc32(json);
    if (got !== want) return { ok: false, reason: `checksum mismatch (recorded ${hex8(want)}, computed ${hex8(got)})`, checksum: true };
  }
  let entry: unknown;
  try {
    entry = JSON.parse(json.toString('utf8'));
  } catch {
    return { ok: false, reason: 'not valid JSON', checksum: false };
  }
  if (!isEntry(entry)) return { ok: false, reason: 'not a journal entry (seq and ops expected)', checksum: false };
  return { ok: true, entry, legacy };
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
