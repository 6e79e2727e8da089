// Reading a RecordLog (store/base/record-log.ts) from its folder: the newest complete snapshot
// (`snap-<gen>.log`), then every write-ahead segment (`wal-<gen>.log`) from its generation on. A
// damaged record with nothing valid after it is a torn last write (the process died mid-write;
// nothing after it was acknowledged) and is cut off. A damaged record followed by a valid one was
// once acknowledged, so the log is refused with the file and line.
import { chmod, mkdir, readdir, readFile, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import type { LogRepair, LogReplay, RecordLogOptions } from '../base/record-log.ts';
import { decodeLine, linesOf } from './line-format.ts';
import { LOG_DIR_MODE, LOG_FILE_MODE } from './log-files.ts';

export type SegmentKind = 'wal' | 'snap';

export function segmentName(kind: SegmentKind, gen: number): string {
  return `${kind}-${String(gen).padStart(12, '0')}.log`;
}

function parseName(name: string): { kind: SegmentKind; gen: number } | null {
  const m = /^(wal|snap)-(\d{12})\.log$/.exec(name);
  return m ? { kind: m[1] as SegmentKind, gen: Number(m[2]) } : null;
}

type ReadOptions<R> = Pick<RecordLogOptions<R>, 'check' | 'corrupt'>;

export async function replayRecordLog<R>(dir: string, opts: ReadOptions<R>, onRecord: (rec: R) => void): Promise<LogReplay> {
  await mkdir(dir, { recursive: true, mode: LOG_DIR_MODE });
  await chmod(dir, LOG_DIR_MODE);
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
    await chmod(file, LOG_FILE_MODE);
    const buf = await readFile(file);
    snapshotBytes = buf.length;
    // a snapshot is renamed into place only once complete and fsynced: any damage is corruption
    for (const { rec, no } of records(buf, opts)) {
      if (typeof rec === 'string') throw opts.corrupt(file, no, rec);
      onRecord(rec);
    }
  }

  let walBytes = 0;
  const cuts: LogRepair[] = [];
  for (const gen of wals) {
    const file = path.join(dir, segmentName('wal', gen));
    await chmod(file, LOG_FILE_MODE);
    const buf = await readFile(file);
    let firstBad: LogRepair | undefined;
    for (const { offset, rec, no } of records(buf, opts)) {
      if (typeof rec === 'string') {
        firstBad ??= { file, line: no, offset, reason: rec };
        continue;
      }
      const torn = cuts[0] ?? firstBad;
      if (torn) throw opts.corrupt(torn.file, torn.line, `${torn.reason}, and valid records follow it`);
      onRecord(rec);
    }
    if (firstBad) cuts.push(firstBad);
    walBytes += firstBad ? firstBad.offset : buf.length;
  }
  for (const c of cuts) await truncate(c.file, c.offset);
  return { gen: Math.max(base, wals.at(-1) ?? 0), walBytes, snapshotBytes, repairs: cuts };
}

/** every line with its byte offset and 1-based number, as a record or the reason it is not one */
function* records<R>(buf: Buffer, opts: ReadOptions<R>): Generator<{ offset: number; rec: R | string; no: number }> {
  for (const { no, offset, bytes } of linesOf(buf)) {
    if (bytes === null) {
      yield { offset, no, rec: 'incomplete last record (no newline)' };
      return;
    }
    const d = decodeLine(bytes);
    if (!d.ok) yield { offset, no, rec: d.reason };
    else yield { offset, no, rec: opts.check(d.value) ?? (d.value as R) };
  }
}
