// Append-only journal with group commit. Every transaction appends one line; callers await
// `sync(seq)` before acknowledging, and all lines waiting at that moment share one write+fdatasync.
// Segments rotate at each snapshot so old segments can be deleted once the snapshot is durable.
// Each line carries a checksum (journal-format.ts); segments are created 0600.
import { open, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../model/index.ts';
import { formatRecord, type JournalEntry } from './journal-format.ts';
import { scanJournal, type JournalDamage } from './journal-scan.ts';

export type { JournalEntry, JournalOp } from './journal-format.ts';

export interface ReplayResult {
  entries: JournalEntry[];
  lastSeq: number;
  files: string[];
  /** a torn last record that was cut off (null when the journal ended cleanly) */
  cut: JournalDamage | null;
}

interface Segment {
  startSeq: number;
  file: string;
  fh: FileHandle | null;
  pending: string[];
  lastSeq: number;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class Journal {
  private segments: Segment[] = [];
  private writing: Promise<void> | null = null;
  private durableSeq = 0;
  private waiters: Waiter[] = [];
  private failed: unknown = null;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
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

  /** Starts a new segment; lines appended from now on go there. */
  rotate(startSeq: number): void {
    this.segments.push({
      startSeq,
      file: path.join(this.dir, `${String(startSeq).padStart(12, '0')}.jsonl`),
      fh: null,
      pending: [],
      lastSeq: startSeq - 1,
    });
  }

  append(entry: JournalEntry): void {
    const seg = this.segments.at(-1);
    if (!seg) throw new Error('journal has no open segment');
    seg.pending.push(formatRecord(entry));
    seg.lastSeq = entry.seq;
  }

  /** Resolves once every line up to `seq` is on disk. */
  sync(seq: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (seq <= this.durableSeq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      this.writing ??= this.drain().finally(() => {
        this.writing = null;
      });
    });
  }

  /** Deletes the segments that hold only entries at or below `seq` (they are in a durable snapshot). */
  async dropThrough(seq: number): Promise<void> {
    // no write may be in flight to a segment while it is closed: wait until none is, then pick the
    // segments synchronously so a drain starting later never sees them
    while (this.writing) await this.writing;
    const dropped: Segment[] = [];
    while (this.segments.length > 1) {
      const seg = this.segments[0]!;
      const next = this.segments[1]!;
      if (next.startSeq - 1 > seq || seg.pending.length > 0) break;
      dropped.push(this.segments.shift()!);
    }
    for (const seg of dropped) {
      await seg.fh?.close();
      await rm(seg.file, { force: true });
    }
  }

  async close(): Promise<void> {
    await this.writing;
    for (const seg of this.segments) await seg.fh?.close();
    this.segments = [];
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiters.length > 0) {
        // Take every pending line and the highest appended seq in one synchronous step: lines
        // appended while this batch is being written wait for the next pass, so `upto` never
        // covers a line that is not on disk yet.
        let upto = this.durableSeq;
        const batch: { seg: Segment; chunk: string }[] = [];
        for (const seg of this.segments) {
          upto = Math.max(upto, seg.lastSeq);
          if (seg.pending.length === 0) continue;
          batch.push({ seg, chunk: seg.pending.join('') });
          seg.pending = [];
        }
        for (const { seg, chunk } of batch) {
          seg.fh ??= await open(seg.file, 'a', 0o600);
          await seg.fh.write(chunk);
          if (this.fsync) await seg.fh.datasync();
        }
        this.durableSeq = upto;
        const still: Waiter[] = [];
        for (const w of this.waiters) (w.seq <= upto ? w.resolve() : still.push(w));
        this.waiters = still;
      }
    } catch (e) {
      this.failed = e;
      for (const w of this.waiters) w.reject(e);
      this.waiters = [];
    }
  }
}
