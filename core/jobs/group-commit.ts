// Group commit for the job log. `append` queues a record; `sync(seq)` resolves once it is written
// and fdatasynced. Records waiting at the same moment share one write and one fdatasync. Writes
// are issued one batch at a time, in order; up to MAX_FLIGHTS fdatasyncs may be in flight at once
// (records that arrive while one is running start the next without waiting for it), and a batch
// counts as durable only once its own fdatasync and every earlier one have returned.
import { open, type FileHandle } from 'node:fs/promises';
import { GpufleetError } from '../../model/index.ts';
import { FILE_MODE, fsyncDir } from './log-replay.ts';

export interface Segment {
  gen: number;
  file: string;
  fh: FileHandle | null;
  /** writes and fdatasyncs in flight on this file */
  busy: number;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** fdatasyncs in flight at once; libuv's pool has 4 threads, and writes need one too */
const MAX_FLIGHTS = 2;

export class GroupCommit {
  private pending: { seg: Segment; buf: Buffer }[] = [];
  private appendedSeq = 0;
  private durableSeq = 0;
  private waiters: Waiter[] = [];
  /** batches written and being fdatasynced, oldest first */
  private flights: { upto: number; landed: boolean }[] = [];
  private writing = false;
  private landing: (() => void) | null = null;
  private failed: GpufleetError | null = null;
  private commits = 0;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
  ) {}

  get failure(): GpufleetError | null {
    return this.failed;
  }

  get stats(): { records: number; commits: number } {
    return { records: this.appendedSeq, commits: this.commits };
  }

  append(seg: Segment, buf: Buffer): number {
    this.pending.push({ seg, buf });
    return ++this.appendedSeq;
  }

  sync(seq: number = this.appendedSeq): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (seq <= this.durableSeq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      if (!this.writing) void this.write();
    });
  }

  /** whether a record of a segment matching `pred` is queued and not yet written */
  hasPending(pred: (s: Segment) => boolean): boolean {
    return this.pending.some((p) => pred(p.seg));
  }

  /** resolves once everything appended so far is durable (or the log failed) */
  async settle(): Promise<void> {
    await this.sync().catch(() => undefined);
  }

  fail(e: unknown, why: string): void {
    this.failed ??= new GpufleetError('INTERNAL', `${why}: ${(e as Error).message}`, { cause: e });
    for (const w of this.waiters) w.reject(this.failed);
    this.waiters = [];
    this.landing?.();
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
        const segs: Segment[] = [];
        let i = 0;
        while (i < batch.length) {
          const seg = batch[i]!.seg;
          const bufs: Buffer[] = [];
          for (; i < batch.length && batch[i]!.seg === seg; i++) bufs.push(batch[i]!.buf);
          seg.busy++;
          segs.push(seg);
          if (!seg.fh) {
            seg.fh = await open(seg.file, 'a', FILE_MODE);
            if (this.fsync) await fsyncDir(this.dir); // the new file's name survives a power loss
          }
          await writeAll(seg.fh, bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs));
        }
        const flight = { upto, landed: false };
        this.flights.push(flight);
        const synced = this.fsync ? Promise.all(segs.map((s) => s.fh!.datasync())) : Promise.resolve([]);
        synced.then(
          () => this.land(flight, segs),
          (e: unknown) => this.fail(e, 'the job log could not be synced'),
        );
      }
    } catch (e) {
      this.fail(e, 'the job log could not be written');
    } finally {
      this.writing = false; // in the same step as the last look at `pending`: no append can slip between
    }
  }

  private land(flight: { upto: number; landed: boolean }, segs: Segment[]): void {
    flight.landed = true;
    for (const s of segs) s.busy--;
    while (this.flights[0]?.landed) this.durableSeq = this.flights.shift()!.upto;
    this.commits++;
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.seq <= this.durableSeq ? w.resolve() : still.push(w));
    this.waiters = still;
    const wake = this.landing;
    this.landing = null;
    wake?.();
  }
}

export async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
}
