// The job queue's own append-only log, with group commit: `append` queues a record and `sync(seq)`
// resolves once it is written and fdatasynced; every record waiting at that moment shares one
// write + fdatasync. Compaction rotates to a new generation (new records go there at once), writes
// a snapshot of the live jobs beside it, and then deletes the older generations.
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
import { GroupCommit, writeAll, type Segment } from './group-commit.ts';
import { encodeRecord, type LogRecord } from './log-record.ts';
import { FILE_MODE, fsyncDir, replayLog, segmentName, type ReplayResult } from './log-replay.ts';

/** snapshot writes are cut into pieces of about this size, so the event loop keeps turning */
const SNAPSHOT_CHUNK = 1 << 20;

export class JobLog {
  private segments: Segment[] = [];
  private readonly gc: GroupCommit;
  private closed = false;
  /** bytes appended to the generations a compaction would drop */
  private walBytes: number;

  /** the last write's failure, until a later write is durable */
  private blocked: GpufleetError | null = null;

  private constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
    replay: ReplayResult,
    onFailure: (e: GpufleetError) => void,
  ) {
    this.walBytes = replay.walBytes;
    this.gc = new GroupCommit(
      dir,
      fsync,
      (e) => {
        this.blocked = e;
        onFailure(e);
      },
      () => {
        this.blocked = null;
      },
    );
    this.segments.push(this.segment(replay.gen));
  }

  /**
   * replays the log in `dir` through `onRecord`, then opens it for appends; `onFailure` is told of
   * each failed write (its changes were refused)
   */
  static async open(
    dir: string,
    fsync: boolean,
    onRecord: (rec: LogRecord) => void,
    onFailure: (e: GpufleetError) => void = () => undefined,
  ): Promise<{ log: JobLog; replay: ReplayResult }> {
    const replay = await replayLog(dir, onRecord);
    return { log: new JobLog(dir, fsync, replay, onFailure), replay };
  }

  /** a write failed and the log is not yet repaired: appends throw until `recover` */
  get failure(): GpufleetError | null {
    return this.gc.failure;
  }

  /** why the log cannot take writes right now (closed, or the last write failed and none succeeded since), or null */
  writeBlocker(): string | null {
    if (this.closed) return 'the job log is closed';
    return this.blocked ? `a job log write failed: ${this.blocked.message}` : null;
  }

  /**
   * After a failed write: cuts the segments back to their durable size, then reads the log again
   * from its files through `onRecord` (the state the queue rebuilds is exactly what is durable) and
   * takes appends again. Throws, leaving the log failed, when the files cannot be cut or read.
   */
  async recover(onRecord: (rec: LogRecord) => void): Promise<ReplayResult> {
    if (this.closed) throw new GpufleetError('INTERNAL', 'the job log is closed');
    await this.gc.repair(this.segments);
    for (const s of this.segments) {
      await s.fh?.close().catch(() => undefined);
      s.fh = null;
    }
    const replay = await replayLog(this.dir, onRecord);
    this.segments = [this.segment(replay.gen)];
    this.walBytes = replay.walBytes;
    this.gc.resume();
    return replay;
  }

  /** records appended and group commits (fdatasyncs) landed since open */
  get stats(): { records: number; commits: number } {
    return this.gc.stats;
  }

  get bytesSinceCompaction(): number {
    return this.walBytes;
  }

  /** throws if the log is closed, or a write failed and the log is not yet recovered */
  assertWritable(): void {
    if (this.closed) throw new GpufleetError('INTERNAL', 'the job log is closed');
    if (this.gc.failure) throw this.gc.failure;
  }

  append(rec: LogRecord): number {
    this.assertWritable();
    const buf = encodeRecord(rec);
    this.walBytes += buf.length;
    return this.gc.append(this.segments.at(-1)!, buf);
  }

  /** the seq of the last record appended */
  get lastSeq(): number {
    return this.gc.stats.records;
  }

  /** resolves once every record up to `seq` (default: all appended) is on disk */
  sync(seq?: number): Promise<void> {
    return this.gc.sync(seq);
  }

  /** new records go to a new generation from now on; returns it */
  rotate(): number {
    const gen = this.segments.at(-1)!.gen + 1;
    this.segments.push(this.segment(gen));
    this.walBytes = 0;
    return gen;
  }

  /**
   * writes the snapshot of generation `gen` (temp file, fdatasync, rename) once `durable` resolved
   * (the records it covers are on disk: a snapshot never makes a refused change durable); resolves
   * with its size. On failure the temp file is removed.
   */
  async writeSnapshot(gen: number, records: Iterable<LogRecord>, durable: Promise<void> = Promise.resolve()): Promise<number> {
    durable.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
    const file = path.join(this.dir, segmentName('snap', gen));
    const tmp = `${file}.tmp`;
    let size = 0;
    try {
      size = await this.writeTemp(tmp, records);
      await durable;
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    await rename(tmp, file);
    if (this.fsync) await fsyncDir(this.dir);
    return size;
  }

  private async writeTemp(tmp: string, records: Iterable<LogRecord>): Promise<number> {
    const fh = await open(tmp, 'w', FILE_MODE);
    let size = 0;
    try {
      let parts: Buffer[] = [];
      let partBytes = 0;
      for (const rec of records) {
        const buf = encodeRecord(rec);
        parts.push(buf);
        partBytes += buf.length;
        if (partBytes >= SNAPSHOT_CHUNK) {
          await writeAll(fh, Buffer.concat(parts));
          size += partBytes;
          parts = [];
          partBytes = 0;
        }
      }
      await writeAll(fh, Buffer.concat(parts));
      size += partBytes;
      if (this.fsync) await fh.datasync();
    } finally {
      await fh.close();
    }
    return size;
  }

  /** deletes the generations below `gen` (its snapshot covers them) */
  async dropBefore(gen: number): Promise<void> {
    // No new record goes to an older generation after `rotate`; wait only until the ones queued
    // before it are written (not for the log to go idle, which under load it never does).
    const old = (s: Segment): boolean => s.gen < gen;
    while (this.gc.hasPending(old) || this.segments.some((s) => old(s) && s.busy > 0)) {
      if (this.gc.hasPending(old)) await this.sync();
      else await new Promise((r) => setTimeout(r, 1)); // the fdatasync in flight returns soon
    }
    const dropped = this.segments.filter(old);
    this.segments = this.segments.filter((s) => !old(s));
    for (const s of dropped) {
      await s.fh?.close();
      await rm(s.file, { force: true });
      await rm(path.join(this.dir, segmentName('snap', s.gen)), { force: true });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.gc.settle();
    this.closed = true;
    for (const s of this.segments) await s.fh?.close();
    this.segments = [];
  }

  private segment(gen: number): Segment {
    return { gen, file: path.join(this.dir, segmentName('wal', gen)), fh: null, busy: 0, size: 0 };
  }
}
