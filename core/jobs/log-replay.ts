// Opening the job log: the newest complete snapshot, then every write-ahead segment from its
// generation on. A damaged record with nothing valid after it is a torn last write (the process
// died mid-write; nothing after it was acknowledged) and is cut off. A damaged record followed by
// a valid one was once acknowledged, so the log is refused with the file and line.
import { chmod, mkdir, open, readdir, readFile, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
import { decodeRecord, type LogRecord } from './log-record.ts';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

export type SegmentKind = 'wal' | 'snap';

export function segmentName(kind: SegmentKind, gen: number): string {
  return `${kind}-${String(gen).padStart(12, '0')}.log`;
}

function parseName(name: string): { kind: SegmentKind; gen: number } | null {
  const m = /^(wal|snap)-(\d{12})\.log$/.exec(name);
  return m ? { kind: m[1] as SegmentKind, gen: Number(m[2]) } : null;
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export interface Repair {
  file: string;
  line: number;
  offset: number;
  reason: string;
}

export interface ReplayResult {
  /** the generation new records go to */
  gen: number;
  /** bytes of write-ahead segments replayed (what compaction would reclaim) */
  walBytes: number;
  snapshotBytes: number;
  /** torn last records that were cut off */
  repairs: Repair[];
}

export async function replayLog(dir: string, onRecord: (rec: LogRecord) => void): Promise<ReplayResult> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await chmod(dir, DIR_MODE);
  const names = await readdir(dir);
  for (const n of names) if (n.endsWith('.tmp')) await rm(path.join(dir, n), { force: true }); // unfinished snapshot
  const segs = names.map((n) => ({ name: n, parsed: parseName(n) })).filter((s) => s.parsed !== null);
  const snaps = segs.filter((s) => s.parsed!.kind === 'snap').map((s) => s.parsed!.gen);
  const base = snaps.length > 0 ? Math.max(...snaps) : 0;
  // files older than the newest snapshot are covered by it (left behind by a crash mid-compaction)
  for (const s of segs) if (s.parsed!.gen < base) await rm(path.join(dir, s.name), { force: true });
  const wals = segs
    .filter((s) => s.parsed!.kind === 'wal' && s.parsed!.gen >= base)
    .map((s) => s.parsed!.gen)
    .sort((a, b) => a - b);

  let snapshotBytes = 0;
  if (snaps.length > 0) {
    const file = path.join(dir, segmentName('snap', base));
    await chmod(file, FILE_MODE);
    const buf = await readFile(file);
    snapshotBytes = buf.length;
    // a snapshot is renamed into place only once complete and fsynced: any damage is corruption
    for (const { rec, no } of lines(buf)) {
      if (typeof rec === 'string') throw corrupt(file, no, rec);
      onRecord(rec);
    }
  }

  let walBytes = 0;
  const cuts: Repair[] = [];
  for (const gen of wals) {
    const file = path.join(dir, segmentName('wal', gen));
    await chmod(file, FILE_MODE);
    const buf = await readFile(file);
    let firstBad: Repair | undefined;
    for (const { offset, rec, no } of lines(buf)) {
      if (typeof rec === 'string') {
        firstBad ??= { file, line: no, offset, reason: rec };
        continue;
      }
      const torn = cuts[0] ?? firstBad;
      if (torn) throw corrupt(torn.file, torn.line, `${torn.reason}, and valid records follow it`);
      onRecord(rec);
    }
    if (firstBad) cuts.push(firstBad);
    walBytes += firstBad ? firstBad.offset : buf.length;
  }
  for (const c of cuts) await truncate(c.file, c.offset);
  return { gen: Math.max(base, wals.at(-1) ?? 0), walBytes, snapshotBytes, repairs: cuts };
}

/** every line with its byte offset and 1-based number; the last, unterminated fragment too */
function* lines(buf: Buffer): Generator<{ offset: number; rec: LogRecord | string; no: number }> {
  let offset = 0;
  let no = 0;
  while (offset < buf.length) {
    no++;
    const nl = buf.indexOf(0x0a, offset);
    if (nl === -1) {
      yield { offset, rec: 'incomplete last record (no newline)', no };
      return;
    }
    yield { offset, rec: decodeRecord(buf.subarray(offset, nl)), no };
    offset = nl + 1;
  }
}

function corrupt(file: string, line: number, reason: string): GpufleetError {
  return new GpufleetError('JOB_LOG_CORRUPT', `job log damaged at ${file}:${line}: ${reason}`, { fields: { file, line, reason } });
}
