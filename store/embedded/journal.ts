// Append-only journal with group commit. Every transaction appends one line and awaits it before
// acknowledging; all lines waiting at that moment share one write+fdatasync. A failed write drops
// every line not yet on disk, cuts the files back to their last durable line, and the next write
// goes on from there: one full disk fails the writes made while it is full, not every later one.
// Segments rotate at each snapshot so old segments can be deleted once the snapshot is durable.
// Each line carries a checksum (journal-format.ts); segments are created 0600.
import { open, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
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
  /** bytes of this segment on disk that hold durable lines: a failed write is cut back to here */
  size: number;
  pending: string[];
  lastSeq: number;
}

interface Ticket {
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
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

/** Writes all of `buf`: a short write (a disk filling up) is continued, and fails at the next call. */
async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) throw new Error('write made no progress');
    off += bytesWritten;
  }
}

/** probe(): a file no segment name matches (journal-scan.ts), and about one group commit's worth of bytes */
const PROBE_FILE = '.write-probe';
const PROBE_BYTES = 64 * 1024;

export class Journal {
  private segments: Segment[] = [];
  /** the drain loop under way (`draining`), for close and dropThrough to wait on */
  private writing: Promise<void> = Promise.resolve();
  private draining = false;
  private durableSeq = 0;
  /** appended lines not yet on disk, in seq order */
  private tickets: Ticket[] = [];
  /** the error of the last failed write while the files are not yet cut back to their durable size */
  private broken: unknown = null;
  /** segments dropped after a failed write, to close and delete before the next write */
  private discarded: Segment[] = [];
  /**
   * The error of the last failed write until a write succeeds again (a batch, or probe()): a full
   * disk stays unable to write after the files are cut back, so /readyz must go on saying so.
   */
  private unwritable: unknown = null;

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

  /** Starts a new segment; lines appended from now on go there. `durableSeq`: what is on disk at start. */
  rotate(startSeq: number): void {
    if (this.segments.length === 0) this.durableSeq = startSeq - 1;
    this.segments.push({
      startSeq,
      file: path.join(this.dir, `${String(startSeq).padStart(12, '0')}.jsonl`),
      fh: null,
      size: 0,
      pending: [],
      lastSeq: startSeq - 1,
    });
  }

  /**
   * Queues one line; the promise resolves once it is on disk, and rejects (STORE_UNAVAILABLE) when
   * its write fails, or an earlier line's does: a line is never kept after one it may depend on.
   */
  append(entry: JournalEntry): Promise<void> {
    const seg = this.segments.at(-1);
    if (!seg) throw new Error('journal has no open segment');
    seg.pending.push(formatRecord(entry));
    seg.lastSeq = entry.seq;
    const done = new Promise<void>((resolve, reject) => this.tickets.push({ seq: entry.seq, resolve, reject }));
    done.catch(() => undefined); // the appender handles it; a line nobody awaits must not crash the process
    if (!this.draining) {
      // set before drain runs, and cleared by drain itself as it returns: no append falls between
      this.draining = true;
      this.writing = this.drain();
    }
    return done;
  }

  /** The last write's error until a write succeeds again (a batch, or probe()), or null. */
  failure(): unknown {
    return this.broken ?? this.unwritable;
  }

  /**
   * Writes and syncs PROBE_BYTES beside the segments, then removes them: while the last write failed,
   * this learns whether the disk takes writes again (space freed) without a transaction to try it.
   * Success clears failure(); an error is thrown as the write's.
   */
  async probe(): Promise<void> {
    const file = path.join(this.dir, PROBE_FILE);
    const fh = await open(file, 'w', 0o600);
    try {
      await writeAll(fh, Buffer.alloc(PROBE_BYTES));
      if (this.fsync) await fh.datasync();
    } finally {
      await fh.close();
      await rm(file, { force: true });
    }
    this.unwritable = null;
  }

  /** Deletes the segments that hold only entries at or below `seq` (they are in a durable snapshot). */
  async dropThrough(seq: number): Promise<void> {
    // no write may be in flight to a segment while it is closed: wait until none is, then pick the
    // segments synchronously so a drain starting later never sees them
    while (this.draining) await this.writing;
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
    while (this.draining) await this.writing;
    if (this.broken) await this.repair().catch(() => undefined);
    for (const seg of this.segments) await seg.fh?.close();
    this.segments = [];
  }

  /**
   * Writes batches until nothing is pending. Pipelined: the batch just made durable is announced
   * (the store moves it into its tables and tells its listeners, then the appenders' promises
   * resolve) while the next batch is already being written, so that work overlaps the disk's.
   */
  private async drain(): Promise<void> {
    /** on disk, not yet announced */
    let written: number | null = null;
    try {
      for (;;) {
        if (this.broken) {
          try {
            await this.repair();
          } catch (e) {
            this.drop(e);
            if (!this.hasPending()) return;
            continue;
          }
        }
        const batch = this.takeBatch();
        const io = batch ? this.writeBatch(batch.parts) : null;
        if (written !== null) this.finish(written);
        written = null;
        if (!batch || !io) {
          if (this.hasPending()) continue;
          return;
        }
        try {
          await io;
        } catch (e) {
          this.drop(e);
          this.unwritable = e;
          // cut back at once, so no refused line lingers on disk; if that fails too, the next write retries it
          await this.repair().catch(() => undefined);
          if (!this.hasPending()) return;
          continue;
        }
        // the whole batch is on disk: only now do the sizes that a failed write is cut back to move
        for (const { seg, buf } of batch.parts) seg.size += buf.length;
        this.unwritable = null;
        written = batch.upto;
      }
    } finally {
      this.draining = false;
    }
  }

  private hasPending(): boolean {
    return this.segments.some((s) => s.pending.length > 0);
  }

  /**
   * Every pending line and the highest appended seq, in one synchronous step: lines appended while
   * this batch is being written wait for the next one, so `upto` never covers a line not yet on disk.
   */
  private takeBatch(): { parts: { seg: Segment; buf: Buffer }[]; upto: number } | null {
    let upto = this.durableSeq;
    const parts: { seg: Segment; buf: Buffer }[] = [];
    for (const seg of this.segments) {
      upto = Math.max(upto, seg.lastSeq);
      if (seg.pending.length === 0) continue;
      parts.push({ seg, buf: Buffer.from(seg.pending.join('')) });
      seg.pending = [];
    }
    return parts.length > 0 ? { parts, upto } : null;
  }

  private async writeBatch(parts: { seg: Segment; buf: Buffer }[]): Promise<void> {
    for (const { seg, buf } of parts) {
      if (!seg.fh) {
        seg.fh = await open(seg.file, 'a', 0o600);
        seg.size = (await seg.fh.stat()).size;
      }
      await writeAll(seg.fh, buf);
      if (this.fsync) await seg.fh.datasync();
    }
  }

  /** Lines up to `upto` are on disk: tell the store, then the appenders. */
  private finish(upto: number): void {
    this.durableSeq = upto;
    this.hooks.durable?.(upto);
    let n = 0;
    while (n < this.tickets.length && this.tickets[n]!.seq <= upto) this.tickets[n++]!.resolve();
    this.tickets.splice(0, n);
  }

  /**
   * A write failed: every line not on disk is dropped (the failed batch, and whatever was appended
   * since: it may build on them), segments that begin after the last durable line are given up, and
   * the files are cut back before the next write (`repair`). Synchronous, so the next append already
   * continues from `durableSeq`.
   */
  private drop(cause: unknown): void {
    this.broken = cause;
    const error = writeFailed(cause, this.tickets.length);
    for (const seg of this.segments) {
      seg.pending = [];
      seg.lastSeq = Math.min(seg.lastSeq, this.durableSeq);
    }
    while (this.segments.length > 1 && this.segments.at(-1)!.startSeq > this.durableSeq + 1) this.discarded.push(this.segments.pop()!);
    const tickets = this.tickets;
    this.tickets = [];
    this.hooks.dropped?.(this.durableSeq, error);
    for (const t of tickets) t.reject(error);
  }

  /** Cuts every open segment back to its durable size (flushed), and deletes the segments given up. */
  private async repair(): Promise<void> {
    for (const seg of this.segments) {
      if (!seg.fh) continue;
      await seg.fh.truncate(seg.size);
      if (this.fsync) await seg.fh.datasync();
    }
    for (const seg of this.discarded.splice(0)) {
      await seg.fh?.close().catch(() => undefined);
      await rm(seg.file, { force: true });
    }
    this.broken = null;
  }
}
