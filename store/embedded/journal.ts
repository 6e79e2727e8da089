// The store's append-only journal, on the one log of store/log/ (its line format and group
// commit): every transaction appends one line and awaits it before acknowledging; all lines waiting
// at that moment share one write+fdatasync. A failed write drops every line not yet on disk, and the
// next write first cuts the files back to their last durable line and goes on from there: one full
// disk fails the writes made while it is full, not every later one. Segments rotate at each
// snapshot so old segments can be deleted once the snapshot is durable. Segments are created 0600.
import { open, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
import { cutBack, GroupCommit, removeSegments, type LogSegment } from '../log/group-commit.ts';
import { LOG_FILE_MODE, writeAll } from '../log/log-files.ts';
import { encodeEntry, type JournalEntry } from './journal-format.ts';
import { scanJournal, type JournalDamage } from './journal-scan.ts';

export type { JournalEntry, JournalOp } from './journal-format.ts';

export interface ReplayResult {
  entries: JournalEntry[];
  lastSeq: number;
  files: string[];
  /** a torn last record that was cut off (null when the journal ended cleanly) */
  cut: JournalDamage | null;
}

interface Segment extends LogSegment {
  startSeq: number;
}

export interface JournalHooks {
  /** every line up to `seq` is on disk; called before the appenders' promises resolve */
  durable?: (seq: number) => void;
  /**
   * A write failed: every line after `keptSeq` was dropped (cut from the file, never to be replayed)
   * and its appender's promise rejects with `error`. The next append gets `keptSeq + 1`.
   */
  dropped?: (keptSeq: number, error: GpufleetError) => void;
}

/** probe(): a file no segment name matches (journal-scan.ts), and about one group commit's worth of bytes */
const PROBE_FILE = '.write-probe';
const PROBE_BYTES = 64 * 1024;

export class Journal {
  private segments: Segment[] = [];
  /** segments dropped after a failed write, to close and delete before the next write */
  private discarded: Segment[] = [];
  /** made at the first rotate(), which says where the journal stands */
  private gc: GroupCommit | null = null;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
    private readonly hooks: JournalHooks = {},
  ) {}

  /**
   * Reads every segment in order. A torn last record (a crash mid-append) is cut off; damage anywhere
   * else throws, naming the file and line, and changes nothing on disk: the records after it were
   * acknowledged, and reading past them would drop them silently.
   */
  static async replay(dir: string, afterSeq: number): Promise<ReplayResult> {
    const scan = await scanJournal(dir, afterSeq);
    const { damage } = scan;
    if (damage && !damage.tail) {
      const where = `${damage.file}:${damage.line}`;
      throw new GpufleetError(
        'INTERNAL',
        `The store's journal is damaged at ${where}: ${damage.reason}. The control plane refuses to start rather than drop ` +
          'the acknowledged writes from there on. `gpufleet store check` describes the damage; `gpufleet store repair` ' +
          'keeps the records before it and moves the rest aside (docs/store.md).',
        { fields: { file: damage.file, line: damage.line, offset: damage.offset, kind: damage.kind, reason: damage.reason } },
      );
    }
    if (damage) await truncate(damage.file, damage.offset);
    return { entries: scan.entries, lastSeq: scan.lastSeq, files: scan.segments.map((s) => s.file), cut: damage };
  }

  /** Starts a new segment; lines appended from now on go there. The first call says what is on disk at start. */
  rotate(startSeq: number): void {
    this.gc ??= new GroupCommit({
      dir: this.dir,
      fsync: this.fsync,
      startSeq: startSeq - 1,
      error: writeFailed,
      onDurable: (seq) => this.hooks.durable?.(seq),
      onFailure: (error, keptSeq) => this.drop(error, keptSeq),
      continueAfter: () => this.repair(),
    });
    this.segments.push({ startSeq, file: path.join(this.dir, `${String(startSeq).padStart(12, '0')}.jsonl`), fh: null, busy: 0, size: 0 });
  }

  /**
   * Queues one line; the promise resolves once it is on disk, and rejects (STORE_UNAVAILABLE) when
   * its write fails, or an earlier line's does: a line is never kept after one it may depend on.
   */
  append(entry: JournalEntry): Promise<void> {
    const seg = this.segments.at(-1);
    if (!seg || !this.gc) throw new Error('journal has no open segment');
    const seq = this.gc.append(seg, encodeEntry(entry));
    if (seq !== entry.seq) throw new Error(`journal line seq ${entry.seq} appended where seq ${seq} comes next`);
    const done = this.gc.sync(seq);
    done.catch(() => undefined); // the appender handles it; a line nobody awaits must not crash the process
    return done;
  }

  /** The last write's error until a write succeeds again (a batch, or probe()), or null. */
  failure(): unknown {
    return this.gc?.blocker ?? null;
  }

  /**
   * Writes and syncs PROBE_BYTES beside the segments, then removes them: while the last write failed,
   * this learns whether the disk takes writes again (space freed) without a transaction to try it.
   * Success clears failure() (once the files are cut back); an error is thrown as the write's.
   */
  async probe(): Promise<void> {
    const file = path.join(this.dir, PROBE_FILE);
    const fh = await open(file, 'w', LOG_FILE_MODE);
    try {
      await writeAll(fh, Buffer.alloc(PROBE_BYTES));
      if (this.fsync) await fh.datasync();
    } finally {
      await fh.close();
      await rm(file, { force: true });
    }
    this.gc?.markWritable();
  }

  /** Deletes the segments that hold only entries at or below `seq` (they are in a durable snapshot). */
  async dropThrough(seq: number): Promise<void> {
    // no write may be in flight to a segment while it is closed: wait until none is, then pick the
    // segments synchronously so a write starting later never sees them
    const covered = (s: LogSegment): boolean => {
      const i = this.segments.indexOf(s as Segment);
      return i >= 0 && i < this.segments.length - 1 && this.segments[i + 1]!.startSeq - 1 <= seq;
    };
    // (a failed write is the store's to handle, not this deletion's)
    const gc = this.gc;
    if (gc) await gc.drain(() => this.segments, covered, () => gc.sync().catch(() => undefined));
    const dropped: Segment[] = [];
    while (this.segments.length > 1 && covered(this.segments[0]!)) dropped.push(this.segments.shift()!);
    await removeSegments(dropped);
  }

  async close(): Promise<void> {
    await this.gc?.settle().catch(() => undefined);
    for (const seg of this.segments) await seg.fh?.close();
    this.segments = [];
  }

  /**
   * A write failed: every line not on disk was dropped (the failed batch, and whatever was appended
   * since: it may build on them); segments that begin after the last durable line are given up, to
   * be deleted before the next write. Synchronous, so the next append already continues from `keptSeq`.
   */
  private drop(error: GpufleetError, keptSeq: number): void {
    while (this.segments.length > 1 && this.segments.at(-1)!.startSeq > keptSeq + 1) this.discarded.push(this.segments.pop()!);
    this.hooks.dropped?.(keptSeq, error);
  }

  /** Cuts every open segment back to its durable size (flushed), and deletes the segments given up. */
  private async repair(): Promise<void> {
    await cutBack(this.segments, this.fsync);
    for (const seg of this.discarded.splice(0)) {
      await seg.fh?.close().catch(() => undefined);
      await rm(seg.file, { force: true });
    }
  }
}

/** A write that failed and what it dropped, in the registry's terms: 503, nothing of it was applied. */
function writeFailed(cause: unknown, lines: number): GpufleetError {
  const errno = (cause as NodeJS.ErrnoException | null)?.code;
  return new GpufleetError(
    'STORE_UNAVAILABLE',
    `The store could not write to its journal (${cause instanceof Error ? cause.message : String(cause)}), so this change was not made. ` +
      'Nothing of it was applied; the store retries with the next write.',
    { cause, fields: { errno: errno ?? null, dropped: lines } },
  );
}
