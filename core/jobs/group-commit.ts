// Group commit for the job log. `append` queues a record; `sync(seq)` resolves once it is written
// and fdatasynced. The write of the records waiting starts at the end of the event-loop turn that
// first asked for one (setImmediate), so every operation of that turn shares one write and one
// fdatasync. Writes are issued one batch at a time, in order; up to MAX_FLIGHTS fdatasyncs may be in
// flight at once (records that arrive while one runs start the next without waiting for it), and a
// batch counts as durable only once its own fdatasync and every earlier one have returned.
//
// A failed write or fdatasync (ENOSPC, EIO) rejects every record not yet durable (the failed batch,
// the ones in flight and everything queued behind: they may build on it) and leaves the log `failed`
// until `repair()` cuts each segment back to its durable size. Nothing is ever acknowledged that is
// not on disk.
import { open, type FileHandle } from 'node:fs/promises';
import { GpufleetError } from '../../model/index.ts';
import { FILE_MODE, fsyncDir } from './log-replay.ts';

export interface Segment {
  gen: number;
  file: string;
  fh: FileHandle | null;
  /** writes in flight on this file */
  busy: number;
  /** bytes of the file that are durable: a failed write is cut back to here */
  size: number;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Flight {
  upto: number;
  landed: boolean;
  parts: { seg: Segment; buf: Buffer }[];
}

/** fdatasyncs in flight at once; libuv's pool has 4 threads, and writes need one too */
const MAX_FLIGHTS = 2;

export class GroupCommit {
  private pending: { seg: Segment; buf: Buffer }[] = [];
  private appendedSeq = 0;
  private durableSeq = 0;
  private waiters: Waiter[] = [];
  private writing = false;
  private scheduled = false;
  /** batches written and being fdatasynced, oldest first */
  private flights: Flight[] = [];
  /** the writer waiting for a flight to land */
  private landing: (() => void) | null = null;
  /** bumped by a failure: fdatasyncs of flights given up then are ignored when they return */
  private epoch = 0;
  /** a write failed and the files are not yet cut back (`repair`) */
  private failed: GpufleetError | null = null;
  /** records dropped by failed writes (seq ranges): a later `sync` of one of them rejects */
  private lost: { from: number; to: number; error: GpufleetError }[] = [];
  private commits = 0;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
    /** told once per failed write, after its waiters were rejected */
    private readonly onFailure: (e: GpufleetError) => void = () => undefined,
    /** told after each durable batch */
    private readonly onDurable: () => void = () => undefined,
  ) {}

  get failure(): GpufleetError | null {
    return this.failed;
  }

  get stats(): { records: number; commits: number } {
    return { records: this.appendedSeq, commits: this.commits };
  }

  append(seg: Segment, buf: Buffer): number {
    if (this.failed) throw this.failed;
    this.pending.push({ seg, buf });
    return ++this.appendedSeq;
  }

  sync(seq: number = this.appendedSeq): Promise<void> {
    const lost = this.lost.find((l) => seq >= l.from && seq <= l.to);
    if (lost) return Promise.reject(lost.error);
    if (seq <= this.durableSeq) return Promise.resolve();
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      if (!this.writing && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (!this.writing) void this.write();
        });
      }
    });
  }

  /** whether a record of a segment matching `pred` is queued and not yet written */
  hasPending(pred: (s: Segment) => boolean): boolean {
    return this.pending.some((p) => pred(p.seg));
  }

  /** resolves once everything appended so far is durable (or the log failed) */
  async settle(): Promise<void> {
    await this.sync().catch(() => undefined);
    while (this.writing) await new Promise((r) => setImmediate(r));
  }

  /**
   * After a failed write: waits for the writer to stop and cuts every open segment back to its
   * durable size (and syncs that). Throws when it cannot; the log stays failed until `resume()`.
   */
  async repair(segments: readonly Segment[]): Promise<void> {
    while (this.writing) await new Promise((r) => setImmediate(r));
    for (const seg of segments) {
      if (!seg.fh) continue;
      await seg.fh.truncate(seg.size);
      if (this.fsync) await seg.fh.datasync();
    }
  }

  /** appends are taken again (after `repair` and whatever the log rebuilt from the files) */
  resume(): void {
    this.failed = null;
  }

  private fail(e: unknown): void {
    const errno = (e as NodeJS.ErrnoException | null)?.code;
    const dropped = this.appendedSeq - this.durableSeq;
    const error = new GpufleetError(
      'JOB_QUEUE_UNAVAILABLE',
      `The job queue could not write to its log (${e instanceof Error ? e.message : String(e)}), so this change was not made. ` +
        'The queue retries with the next change.',
      { cause: e, fields: { errno: errno ?? null, dropped } },
    );
    this.failed = error;
    this.epoch++;
    for (const f of this.flights) for (const p of f.parts) p.seg.busy--;
    this.flights = [];
    if (dropped > 0) {
      this.lost.push({ from: this.durableSeq + 1, to: this.appendedSeq, error });
      if (this.lost.length > 8) this.lost.shift(); // nobody asks about seqs that old
    }
    this.pending = [];
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(error);
    const wake = this.landing;
    this.landing = null;
    wake?.();
    this.onFailure(error);
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0 && !this.failed) {
        while (this.flights.length >= MAX_FLIGHTS && !this.failed) await new Promise<void>((r) => (this.landing = r));
        if (this.failed) return;
        // every pending record and the highest seq, taken in one synchronous step
        const batch = this.pending;
        const upto = this.appendedSeq;
        this.pending = [];
        const parts: { seg: Segment; buf: Buffer }[] = [];
        let i = 0;
        while (i < batch.length) {
          const seg = batch[i]!.seg;
          const bufs: Buffer[] = [];
          for (; i < batch.length && batch[i]!.seg === seg; i++) bufs.push(batch[i]!.buf);
          parts.push({ seg, buf: bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs) });
        }
        const flight: Flight = { upto, landed: false, parts };
        for (const p of parts) p.seg.busy++;
        this.flights.push(flight);
        const epoch = this.epoch;
        for (const { seg, buf } of parts) {
          if (!seg.fh) {
            const fh = await open(seg.file, 'a', FILE_MODE);
            seg.fh = fh;
            seg.size = (await fh.stat()).size;
            if (this.fsync) await fsyncDir(this.dir); // the new file's name survives a power loss
          }
          await writeAll(seg.fh, buf);
        }
        const synced = this.fsync ? Promise.all(parts.map((p) => p.seg.fh!.datasync())) : Promise.resolve([]);
        synced.then(
          () => this.land(flight, epoch),
          (e: unknown) => {
            if (epoch === this.epoch) this.fail(e);
          },
        );
      }
    } catch (e) {
      this.fail(e);
    } finally {
      this.writing = false; // in the same step as the last look at `pending`: no append can slip between
    }
  }

  /** a flight's fdatasync returned: it counts once it and every earlier one did */
  private land(flight: Flight, epoch: number): void {
    if (epoch !== this.epoch) return; // a failure since gave it up (and cut the files back)
    flight.landed = true;
    for (const p of flight.parts) p.seg.busy--;
    while (this.flights[0]?.landed) {
      const f = this.flights.shift()!;
      this.durableSeq = f.upto;
      // only now do the sizes a failed write is cut back to move
      for (const { seg, buf } of f.parts) seg.size += buf.length;
    }
    this.commits++;
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.seq <= this.durableSeq ? w.resolve() : still.push(w));
    this.waiters = still;
    const wake = this.landing;
    this.landing = null;
    wake?.();
    this.onDurable();
  }
}

/** Writes all of `buf`: a short write (a disk filling up) is continued, and fails at the next call. */
export async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) throw new Error('write made no progress');
    off += bytesWritten;
  }
}
