// The one record format of every log in store/ (the store's journal and the job queue's log): one
// record per line, `<crc32 of the JSON, 8 lowercase hex digits> <JSON>\n`. The checksum is what lets
// replay tell a damaged record from a good one, so damage is reported instead of read as the end of
// the log; JSON escapes newlines, so a record is always one line. Lines that begin with `{` are the
// store journal's earlier, unchecked format: read when the caller allows them, never written.
import zlib from 'node:zlib';

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

/** CRC-32 (IEEE, as zlib and gzip compute it); zlib.crc32 exists from Node 20.15 on */
export const crc32: (buf: Uint8Array) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (buf) => zlib.crc32(buf) : tableCrc32;

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** `value` as one checksummed line, its newline included */
export function encodeLine(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value));
  const out = Buffer.allocUnsafe(json.length + 10);
  out.write(hex8(crc32(json)), 0, 'latin1');
  out[8] = 0x20;
  json.copy(out, 9);
  out[out.length - 1] = 0x0a;
  return out;
}

export type DecodedLine =
  | { ok: true; value: unknown; /** a line in the earlier, unchecked format */ legacy: boolean }
  | { ok: false; reason: string; /** the JSON is there but fails its checksum */ checksum: boolean };

const HEX8 = /^[0-9a-f]{8}$/;

/** Decodes one line (without its `\n`): checksum, then JSON. `legacy`: lines that begin with `{` are read unchecked. */
export function decodeLine(line: Buffer, opts: { legacy?: boolean } = {}): DecodedLine {
  let json: Buffer;
  let legacy = false;
  if (opts.legacy && line[0] === 0x7b /* { */) {
    json = line;
    legacy = true;
  } else {
    const header = line.toString('latin1', 0, 8);
    if (line.length < 9 || line[8] !== 0x20 || !HEX8.test(header)) return { ok: false, reason: 'not a record (no checksum header)', checksum: false };
    json = line.subarray(9);
    const want = Number.parseInt(header, 16);
    const got = crc32(json);
    if (got !== want) return { ok: false, reason: `checksum mismatch (recorded ${hex8(want)}, computed ${hex8(got)})`, checksum: true };
  }
  try {
    return { ok: true, value: JSON.parse(json.toString('utf8')), legacy };
  } catch {
    return { ok: false, reason: 'not valid JSON', checksum: false };
  }
}

/** One line of a log file: its 1-based number, byte offset, and bytes (null: the last line has no `\n`). */
export interface RawLine {
  no: number;
  offset: number;
  bytes: Buffer | null;
}

/** every line of `buf` from byte `from` on, the last, unterminated fragment too */
export function* linesOf(buf: Buffer, from = 0): Generator<RawLine> {
  let offset = from;
  let no = 0;
  while (offset < buf.length) {
    no++;
    const nl = buf.indexOf(0x0a, offset);
    if (nl === -1) {
      yield { no, offset, bytes: null };
      return;
    }
    yield { no, offset, bytes: buf.subarray(offset, nl) };
    offset = nl + 1;
  }
}

/** lines from byte `from` to the end of `buf` (an unterminated last one counts) */
export function countLines(buf: Buffer, from = 0): number {
  let n = 0;
  for (const _ of linesOf(buf, from)) n++;
  return n;
}
