// Reads every journal segment and checks it record by record: each line's checksum and shape, and
// that sequence numbers run on without a gap (within a segment, from one segment to the next, and
// from the snapshot to the journal). Start, `gpufleet store check` and `gpufleet store repair` all
// read the journal through this one function, so they agree on what is damaged.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { countLines, linesOf } from '../log/line-format.ts';
import { parseRecord, type JournalEntry } from './journal-format.ts';

/** a segment file: `<first seq, 12 digits>.jsonl` */
export const SEGMENT_NAME = /^(\d+)\.jsonl$/;

/**
 * incomplete: a final line without its end; checksum / malformed: a line that fails its checksum or
 * is not a record; sequence: a record out of order; gap: records missing between segments, or
 * between the snapshot and the journal
 */
export type DamageKind = 'incomplete' | 'checksum' | 'malformed' | 'sequence' | 'gap';

export interface JournalDamage {
  kind: DamageKind;
  file: string;
  /** 1-based line number in `file` */
  line: number;
  /** byte offset of that line: the records before it are intact */
  offset: number;
  reason: string;
  /**
   * The damaged record is the journal's very last one (an incomplete final line, or a final line that
   * fails its checksum): what a crash during an append leaves. Start cuts it off by itself; the write
   * it held was never acknowledged, because acknowledgement waits for the whole line to be on disk.
   * (A last line damaged after it was written looks the same, and is cut the same way, with a warning.)
   */
  tail: boolean;
}

export interface ScannedSegment {
  file: string;
  startSeq: number;
  size: number;
  lines: number;
  /** the intact records before the first damaged line (all of them when `damage` is null) */
  entries: JournalEntry[];
  /** lines from the damaged one to the end of the file (0 when undamaged) */
  linesFromDamage: number;
  damage: JournalDamage | null;
  /** records in the older, unchecked line format */
  legacy: number;
}

export interface JournalScan {
  segments: ScannedSegment[];
  /** the first damage in journal order: what start refuses on (or cuts, when `tail`) */
  damage: JournalDamage | null;
  /** intact records after `afterSeq`, in order, up to the first damage */
  entries: JournalEntry[];
  lastSeq: number;
}

export async function segmentFiles(dir: string): Promise<{ file: string; startSeq: number }[]> {
  const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [] as string[];
    throw e;
  });
  return names
    .map((n) => ({ n, m: SEGMENT_NAME.exec(n) }))
    .filter((x): x is { n: string; m: RegExpExecArray } => x.m !== null)
    .map(({ n, m }) => ({ file: path.join(dir, n), startSeq: Number(m[1]) }))
    .sort((a, b) => a.startSeq - b.startSeq);
}

function scanSegment(file: string, startSeq: number, buf: Buffer): ScannedSegment {
  const seg: ScannedSegment = { file, startSeq, size: buf.length, lines: countLines(buf, 0), entries: [], linesFromDamage: 0, damage: null, legacy: 0 };
  for (const { no: line, offset: pos, bytes } of linesOf(buf)) {
    const fail = (kind: DamageKind, reason: string) => {
      seg.damage = { kind, file, line, offset: pos, reason, tail: false };
      seg.linesFromDamage = countLines(buf, pos);
    };
    if (bytes === null) {
      fail('incomplete', 'incomplete record (the line has no end)');
      break;
    }
    const parsed = parseRecord(bytes);
    if (!parsed.ok) {
      fail(parsed.checksum ? 'checksum' : 'malformed', parsed.reason);
      break;
    }
    // a segment is named after its first seq and its records are numbered one after another
    const want = seg.entries.length === 0 ? startSeq : seg.entries.at(-1)!.seq + 1;
    if (parsed.entry.seq !== want) {
      fail('sequence', `record seq ${parsed.entry.seq} where seq ${want} was expected`);
      break;
    }
    if (parsed.legacy) seg.legacy++;
    seg.entries.push(parsed.entry);
  }
  return seg;
}

/** Scans `dir` (the journal folder). `afterSeq`: the seq the snapshot holds everything up to. */
export async function scanJournal(dir: string, afterSeq: number): Promise<JournalScan> {
  const segments: ScannedSegment[] = [];
  for (const { file, startSeq } of await segmentFiles(dir)) segments.push(scanSegment(file, startSeq, await readFile(file)));

  // a segment must begin where the one before it ended, and the first where the snapshot ends (or
  // before: segments a snapshot already covers may remain after a crash before they were deleted)
  let prevLast: number | null = null;
  for (const seg of segments) {
    if (seg.entries.length === 0 && !seg.damage) continue; // created, never written
    const want = prevLast === null ? afterSeq + 1 : prevLast + 1;
    const gap = prevLast === null ? seg.startSeq > want : seg.startSeq !== want;
    if (gap) {
      seg.damage = {
        kind: 'gap',
        file: seg.file,
        line: 1,
        offset: 0,
        reason:
          prevLast === null
            ? `the journal begins at seq ${seg.startSeq} but the snapshot holds records up to seq ${afterSeq} only`
            : `the segment begins at seq ${seg.startSeq} but the one before it ends at seq ${prevLast}`,
        tail: false,
      };
      seg.linesFromDamage = seg.lines;
      seg.entries = [];
    }
    prevLast = seg.damage ? null : (seg.entries.at(-1)?.seq ?? seg.startSeq - 1);
    if (seg.damage) break;
  }

  const damaged = segments.find((s) => s.damage);
  const damage = damaged?.damage ?? null;
  if (damage && damaged) {
    // torn last record: the damaged line is the last line of the last segment with any content
    const lastWithContent = segments.findLast((s) => s.size > 0);
    const isLastLine = damaged.linesFromDamage === 1;
    const torn = damage.kind === 'incomplete' || damage.kind === 'checksum' || damage.kind === 'malformed';
    damage.tail = torn && lastWithContent === damaged && isLastLine;
  }

  const entries: JournalEntry[] = [];
  let lastSeq = afterSeq;
  for (const seg of segments) {
    for (const e of seg.entries) {
      if (e.seq <= lastSeq) continue;
      entries.push(e);
      lastSeq = e.seq;
    }
    if (seg.damage) break;
  }
  return { segments, damage, entries, lastSeq };
}
