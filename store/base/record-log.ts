// The RecordLog port: an append-only, checksummed, group-committed log of records with compaction,
// for a domain that keeps its state in memory and rebuilds it from the log (the embedded job queue,
// core/jobs). The domain owns what a record means and how records change its state; store/ owns the
// files (store/log/: format, group commit, replay, damage). Opened with `openRecordLog`.
import type { GpufleetError } from '../../model/index.ts';

/** a torn last record cut off when the log was read */
export interface LogRepair {
  file: string;
  /** 1-based line number in `file` */
  line: number;
  /** byte offset the file was cut back to */
  offset: number;
  reason: string;
}

export interface LogReplay {
  /** the generation new records go to */
  gen: number;
  /** bytes of records appended since the newest snapshot (what a compaction would reclaim) */
  walBytes: number;
  snapshotBytes: number;
  /** torn last records that were cut off */
  repairs: LogRepair[];
}

export interface RecordLogOptions<R> {
  dir: string;
  /** false only in tests and benches that measure without the disk */
  fsync: boolean;
  /** null when `value` is a record of this log, else why it is not (a damaged log) */
  check: (value: unknown) => string | null;
  /** each record read at open (and at `recover`), in order */
  onRecord: (rec: R) => void;
  /** told of each failed write (its records were refused), after the log is marked failed */
  onFailure?: (e: GpufleetError) => void;
  /** what a failed write becomes, in the domain's terms; `dropped`: the records it refused */
  writeFailed: (cause: unknown, dropped: number) => GpufleetError;
  /** what damage with acknowledged records after it becomes (the log is refused) */
  corrupt: (file: string, line: number, reason: string) => GpufleetError;
}

export interface RecordLog<R> {
  /** a write failed and the log is not yet recovered: appends throw it until `recover` */
  readonly failure: GpufleetError | null;
  /** the last failed write until a later write is durable, or null */
  readonly blocker: GpufleetError | null;
  readonly closed: boolean;
  /** records appended (the last seq) and group commits (fdatasyncs) landed since open */
  readonly stats: { records: number; commits: number };
  /** the seq of the last record appended */
  readonly lastSeq: number;
  readonly bytesSinceCompaction: number;
  /** throws if the log is closed, or a write failed and it is not yet recovered */
  assertWritable(): void;
  /** queues `rec`; returns its seq (sync(seq) resolves once it is on disk) */
  append(rec: R): number;
  /** resolves once every record up to `seq` (default: all appended) is on disk; rejects if its write failed */
  sync(seq?: number): Promise<void>;
  /**
   * After a failed write: cuts the files back to what is durable, reads the log again through
   * `onRecord` (the state rebuilt is exactly what is durable) and takes appends again.
   */
  recover(onRecord: (rec: R) => void): Promise<LogReplay>;
  /** new records go to a new generation from now on; returns it */
  rotate(): number;
  /**
   * Writes the snapshot of generation `gen` (all of `records`) atomically once `durable` resolved
   * (a snapshot never makes a refused change durable); resolves with its size.
   */
  writeSnapshot(gen: number, records: Iterable<R>, durable?: Promise<void>): Promise<number>;
  /** deletes the generations below `gen` (its snapshot covers them) */
  dropBefore(gen: number): Promise<void>;
  close(): Promise<void>;
}
