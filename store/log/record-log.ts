// The RecordLog port's implementation (store/base/record-log.ts), over the one log format and group
// commit of store/log/. Records go to write-ahead generations (`wal-<gen>.log`); compaction rotates
// to a new generation (new records go there at once), writes a snapshot of the live state beside it
// (`snap-<gen>.log`, the same line format) and then deletes the older generations.
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
import type { LogReplay, RecordLog, RecordLogOptions } from '../base/record-log.ts';
import { cutBack, GroupCommit, removeSegments, type LogSegment } from './group-commit.ts';
import { encodeLine } from './line-format.ts';
import { writeLinesAtomically } from './log-files.ts';
import { replayRecordLog, segmentName } from './record-log-replay.ts';

interface Generation extends LogSegment {
  gen: number;
}

/** Reads the log in `opts.dir` through `opts.onRecord`, then opens it for appends. */
export async function openRecordLog<R>(opts: RecordLogOptions<R>): Promise<{ log: RecordLog<R>; replay: LogReplay }> {
  const replay = await replayRecordLog(opts.dir, opts, opts.onRecord);
  return { log: new FileRecordLog<R>(opts, replay), replay };
}

class FileRecordLog<R> implements RecordLog<R> {
  private segments: Generation[] = [];
  private readonly gc: GroupCommit;
  closed = false;
  /** bytes appended to the generations a compaction would drop */
  private walBytes: number;

  constructor(
    private readonly opts: RecordLogOptions<R>,
    replay: LogReplay,
  ) {
    this.walBytes = replay.walBytes;
    this.gc = new GroupCommit({
      dir: opts.dir,
      fsync: opts.fsync,
      error: opts.writeFailed,
      onFailure: (e) => opts.onFailure?.(e),
    });
    this.segments.push(this.segment(replay.gen));
  }

  get failure(): GpufleetError | null {
    return this.gc.failure;
  }

  get blocker(): GpufleetError | null {
    return this.gc.blocker;
  }

  async recover(onRecord: (rec: R) => void): Promise<LogReplay> {
    if (this.closed) throw new GpufleetError('INTERNAL', 'the log is closed');
    await this.gc.idle();
    await cutBack(this.segments, this.opts.fsync);
    for (const s of this.segments) {
      await s.fh?.close().catch(() => undefined);
      s.fh = null;
    }
    const replay = await replayRecordLog(this.opts.dir, this.opts, onRecord);
    this.segments = [this.segment(replay.gen)];
    this.walBytes = replay.walBytes;
    this.gc.resume();
    return replay;
  }

  get stats(): { records: number; commits: number } {
    return this.gc.stats;
  }

  get bytesSinceCompaction(): number {
    return this.walBytes;
  }

  assertWritable(): void {
    if (this.closed) throw new GpufleetError('INTERNAL', 'the log is closed');
    if (this.gc.failure) throw this.gc.failure;
  }

  append(rec: R): number {
    this.assertWritable();
    const buf = encodeLine(rec);
    this.walBytes += buf.length;
    return this.gc.append(this.segments.at(-1)!, buf);
  }

  get lastSeq(): number {
    return this.gc.stats.records;
  }

  sync(seq?: number): Promise<void> {
    return this.gc.sync(seq);
  }

  rotate(): number {
    const gen = this.segments.at(-1)!.gen + 1;
    this.segments.push(this.segment(gen));
    this.walBytes = 0;
    return gen;
  }

  writeSnapshot(gen: number, records: Iterable<R>, durable: Promise<void> = Promise.resolve()): Promise<number> {
    return writeLinesAtomically(path.join(this.opts.dir, segmentName('snap', gen)), records, this.opts.fsync, durable);
  }

  async dropBefore(gen: number): Promise<void> {
    // No new record goes to an older generation after `rotate`; wait only until the ones queued
    // before it are written (not for the log to go idle, which under load it never does).
    const old = (s: LogSegment): boolean => (s as Generation).gen < gen;
    await this.gc.drain(() => this.segments, old);
    const dropped = this.segments.filter(old);
    this.segments = this.segments.filter((s) => !old(s));
    await removeSegments(dropped, (s) => [path.join(this.opts.dir, segmentName('snap', s.gen))]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.gc.settle();
    this.closed = true;
    for (const s of this.segments) await s.fh?.close();
    this.segments = [];
  }

  private segment(gen: number): Generation {
    return { gen, file: path.join(this.opts.dir, segmentName('wal', gen)), fh: null, busy: 0, size: 0 };
  }
}
