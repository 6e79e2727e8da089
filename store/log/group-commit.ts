// Group commit, for every log in store/. `append` queues a record (a checksummed line) for a segment
// file and returns its seq; `sync(seq)` resolves once it is written and fdatasynced. The write of the
// records waiting starts at the end of the event-loop turn that first asked for one (setImmediate),
// so every append of that turn shares one write and one fdatasync. Writes are issued one batch at a
// time, in order; up to MAX_FLIGHTS fdatasyncs may be in flight at once (records that arrive while
// one runs start the next without waiting for it), and a batch counts as durable only once its own
// fdatasync and every earlier one have returned.
//
// A failed write or fdatasync (ENOSPC, EIO) rejects every record not yet durable (the failed batch,
// the ones in flight and everything queued behind: they may build on it). Nothing is ever
// acknowledged that is not on disk. What comes next is the owner's choice (`continueAfter`): the log
// holds until its owner has cut the files back and rebuilt its state from them (the job queue), or
// it goes on at once, numbering from the last durable record, and cuts the files back before its
// next write (the store's journal).
import { open, rm, type FileHandle } from 'node:fs/promises';
import type { GpufleetError } from '../../model/index.ts';
import { fsyncPath, LOG_FILE_MODE, writeAll } from './log-files.ts';

/** one file records are appended to */
export interface LogSegment {
  file: string;
  /** opened (append mode) at its first write */
  fh: FileHandle | null;
  /** writes in flight on this file */
  busy: number;
  /** bytes of the file that are durable: a failed write is cut back to here */
  size: number;
}

export interface GroupCommitOptions {
  dir: string;
  fsync: boolean;
  /** the seq of the last record on disk when the log opens: appends number on from it */
  startSeq?: number;
  /** what a failed write becomes (in the registry's terms of the log's owner); `dropped`: records it refused */
  error: (cause: unknown, dropped: number) => GpufleetError;
  /** every record up to `seq` is on disk: told before their sync() promises resolve */
  onDurable?: (seq: number) => void;
  /** a write failed and every record after `keptSeq` was dropped: told before their promises reject */
  onFailure?: (error: GpufleetError, keptSeq: number) => void;
  /**
   * Absent: after a failed write the log holds (appends throw `failure`) until its owner has cut the
   * files back (`cutBack`), rebuilt what it needs from them, and called `resume()`. Given: appends go
   * on at once, numbered from the last durable record, and the next write first runs this (it must
   * cut the files back to their durable sizes); if it throws, the records waiting are dropped too.
   */
  continueAfter?: () => Promise<void>;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Flight {
  upto: number;
  landed: boolean;
  parts: { seg: LogSegment; buf: Buffer }[];
}

/** fdatasyncs in flight at once; libuv's pool has 4 threads, and writes need one too */
const MAX_FLIGHTS = 2;

/** Cuts every open segment back to its durable size, and flushes that. */
export async function cutBack(segments: readonly LogSegment[], fsync: boolean): Promise<void> {
  for (const seg of segments) {
    if (!seg.fh) continue;
    await seg.fh.truncate(seg.size);
    if (fsync) await seg.fh.datasync();
  }
}

/** Closes each segment's file and deletes it, with the files `beside` names (a generation's snapshot). */
export async function removeSegments<S extends LogSegment>(segments: readonly S[], beside: (s: S) => string[] = () => []): Promise<void> {
  for (const s of segments) {
    await s.fh?.close();
    await rm(s.file, { force: true });
    for (const f of beside(s)) await rm(f, { force: true });
  }
}

export class GroupCommit {
  private pending: { seg: LogSegment; buf: Buffer }[] = [];
  private appendedSeq: number;
  private durableSeq: number;
  private waiters: Waiter[] = [];
  private writing = false;
  private scheduled = false;
  /** batches written and being fdatasynced, oldest first */
  private flights: Flight[] = [];
  /** the writer waiting for a flight to land */
  private landing: (() => void) | null = null;
  /** bumped by a failure: fdatasyncs of flights given up then are ignored when they return */
  private epoch = 0;
  /** holding after a failed write, until `resume()` */
  private failed: GpufleetError | null = null;
  /** going on after a failed write: the files are cut back before the next write */
  private cutBackDue: GpufleetError | null = null;
  /** the last failure until a batch is durable again (or `markWritable()`) */
  private unwritable: GpufleetError | null = null;
  /** records dropped by failed writes (seq ranges) while holding: a later `sync` of one of them rejects */
  private lost: { from: number; to: number; error: GpufleetError }[] = [];
  private commits = 0;

  constructor(private readonly opts: GroupCommitOptions) {
    this.appendedSeq = this.durableSeq = opts.startSeq ?? 0;
  }

  /** the failed write while the log holds (appends throw it), or null */
  get failure(): GpufleetError | null {
    return this.failed;
  }

  /** the last failed write until a write succeeds again, or null: why the log cannot take writes now */
  get blocker(): GpufleetError | null {
    return this.failed ?? this.cutBackDue ?? this.unwritable;
  }

  /** the disk took a write outside the log (a probe): the last failure no longer blocks */
  markWritable(): void {
    this.unwritable = null;
  }

  /** the seq of the last record appended (records: appended since open; commits: fdatasyncs landed) */
  get stats(): { records: number; commits: number } {
    return { records: this.appendedSeq, commits: this.commits };
  }

  append(seg: LogSegment, buf: Buffer): number {
    if (this.failed) throw this.failed;
    this.pending.push({ seg, buf });
    return ++this.appendedSeq;
  }

  /** resolves once every record up to `seq` (default: all appended) is on disk; rejects if its write failed */
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
  hasPending(pred: (s: LogSegment) => boolean): boolean {
    return this.pending.some((p) => pred(p.seg));
  }

  /**
   * Resolves once no record for a segment `pick` chooses is queued or being written to its file, so
   * those segments may be closed: their owner appends nothing to them any more (a snapshot covers
   * them, or a rotation left them behind). Queued ones are written first through `flush` (the owner's
   * sync: whether a failed write throws here is the owner's choice); a write in flight is waited for.
   * `segments` is read again on each turn, as the owner's list may change meanwhile.
   */
  async drain(segments: () => readonly LogSegment[], pick: (s: LogSegment) => boolean, flush: () => Promise<void> = () => this.sync()): Promise<void> {
    while (this.hasPending(pick) || segments().some((s) => pick(s) && s.busy > 0)) {
      if (this.hasPending(pick)) await flush();
      else await new Promise((r) => setTimeout(r, 1)); // the fdatasync in flight returns soon
    }
  }

  /**
   * Resolves once everything appended so far is durable or dropped, and the writer stopped; when
   * the log goes on after failures, once the files are cut back too.
   */
  async settle(): Promise<void> {
    await this.sync().catch(() => undefined);
    while (this.writing) await new Promise((r) => setImmediate(r));
    if (this.cutBackDue && this.opts.continueAfter) {
      await this.opts.continueAfter();
      this.cutBackDue = null;
    }
  }

  /** waits for the writer to stop (after a failure, before the files are cut back) */
  async idle(): Promise<void> {
    while (this.writing) await new Promise((r) => setImmediate(r));
  }

  /** appends are taken again (after a hold: the files were cut back and the owner rebuilt its state) */
  resume(): void {
    this.failed = null;
  }

  /** runs the owner's cut back; a failure of it drops what waits too (and is not retried until the next append) */
  private async cutBackNow(): Promise<boolean> {
    this.cutBackDue = null;
    try {
      await this.opts.continueAfter!();
      return true;
    } catch (e) {
      this.fail(e, false);
      return false;
    }
  }

  /** `retry`: going on after failures, start cutting the files back at once */
  private fail(e: unknown, retry = true): void {
    const dropped = this.appendedSeq - this.durableSeq;
    const error = this.opts.error(e, dropped);
    this.epoch++;
    for (const f of this.flights) for (const p of f.parts) p.seg.busy--;
    this.flights = [];
    this.pending = [];
    this.unwritable = error;
    if (this.opts.continueAfter) {
      this.cutBackDue = error;
      this.appendedSeq = this.durableSeq; // the next append takes the first dropped seq again
      if (retry) {
        setImmediate(() => {
          if (!this.writing) void this.write();
        });
      }
    } else {
      this.failed = error;
      if (dropped > 0) {
        this.lost.push({ from: this.durableSeq + 1, to: this.appendedSeq, error });
        if (this.lost.length > 8) this.lost.shift(); // nobody asks about seqs that old
      }
    }
    const waiters = this.waiters;
    this.waiters = [];
    this.opts.onFailure?.(error, this.durableSeq);
    for (const w of waiters) w.reject(error);
    const wake = this.landing;
    this.landing = null;
    wake?.();
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      for (;;) {
        if (this.failed) return;
        if (this.cutBackDue) {
          // after a failed write, before anything else: no refused record may linger on disk
          if (!(await this.cutBackNow())) return; // the next append tries again
          continue;
        }
        if (this.pending.length === 0) return;
        while (this.flights.length >= MAX_FLIGHTS && !this.failed && !this.cutBackDue) await new Promise<void>((r) => (this.landing = r));
        if (this.failed || this.cutBackDue) continue;
        // every pending record and the highest seq, taken in one synchronous step
        const batch = this.pending;
        const upto = this.appendedSeq;
        this.pending = [];
        const parts: { seg: LogSegment; buf: Buffer }[] = [];
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
            const fh = await open(seg.file, 'a', LOG_FILE_MODE);
            seg.fh = fh;
            seg.size = (await fh.stat()).size;
            if (this.opts.fsync) await fsyncPath(this.opts.dir); // the new file's name survives a power loss
          }
          await writeAll(seg.fh, buf);
        }
        if (epoch !== this.epoch) continue; // an earlier flight failed meanwhile: this one was dropped with it
        const synced = this.opts.fsync ? Promise.all(parts.map((p) => p.seg.fh!.datasync())) : Promise.resolve([]);
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
    let upto = this.durableSeq;
    while (this.flights[0]?.landed) {
      const f = this.flights.shift()!;
      upto = f.upto;
      // only now do the sizes a failed write is cut back to move
      for (const { seg, buf } of f.parts) seg.size += buf.length;
    }
    this.commits++;
    this.unwritable = null;
    if (upto > this.durableSeq) {
      this.durableSeq = upto;
      this.opts.onDurable?.(upto);
    }
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.seq <= this.durableSeq ? w.resolve() : still.push(w));
    this.waiters = still;
    const wake = this.landing;
    this.landing = null;
    wake?.();
  }
}
