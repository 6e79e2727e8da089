// Append-only journal with group commit. Every transaction appends one line; callers await
// `sync(seq)` before acknowledging, and all lines waiting at that moment share one write+fdatasync.
// Segments rotate at each snapshot so old segments can be deleted once the snapshot is durable.
import { open, readdir, readFile, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

export interface JournalOp {
  c: string;
  id: string;
  /** the record, or null for a delete */
  v: unknown;
}

export interface JournalEntry {
  seq: number;
  ops: JournalOp[];
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

  /** Reads every segment in order; a torn last line (crash mid-write) is cut off. */
  static async replay(dir: string, afterSeq: number): Promise<{ entries: JournalEntry[]; lastSeq: number; files: string[] }> {
    const files = (await readdir(dir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.jsonl'))
      .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    const entries: JournalEntry[] = [];
    let lastSeq = afterSeq;
    const paths: string[] = [];
    for (const f of files) {
      const file = path.join(dir, f);
      paths.push(file);
      const text = await readFile(file, 'utf8');
      let good = 0;
      for (const line of text.split('\n')) {
        if (line === '') break;
        let entry: JournalEntry;
        try {
          entry = JSON.parse(line) as JournalEntry;
        } catch {
          break; // torn write: nothing after it was acknowledged
        }
        good += Buffer.byteLength(line) + 1;
        if (entry.seq > lastSeq) {
          entries.push(entry);
          lastSeq = entry.seq;
        }
      }
      if (good < Buffer.byteLength(text)) await truncate(file, good);
    }
    return { entries, lastSeq, files: paths };
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
    seg.pending.push(JSON.stringify(entry) + '\n');
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
          seg.fh ??= await open(seg.file, 'a');
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
