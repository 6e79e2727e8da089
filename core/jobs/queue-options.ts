// Options of the embedded job queue and their defaults.
import type { GpufleetError } from '../../model/index.ts';
import { JOB_LIMITS, type Retention } from '../../model/index.ts';

/** the rules every job queue takes, whatever keeps its jobs */
export interface QueueRuleOptions {
  /** ms since the epoch; injectable for tests (replicas on a database compare deadlines by their own clocks: keep them in NTP) */
  clock?: () => number;
  /** a taken job is lost when its worker is silent this long; default 30000 */
  leaseMs?: number;
  /** automatic requeues of a job whose worker was lost; default 3 */
  maxLostRetries?: number;
  /** automatic requeues of a job whose handler returned an error; default 0 (see docs/jobs.md) */
  maxErrorRetries?: number;
  retention?: Partial<Retention>;
  /** how often due deadlines are applied; 0: only on operations and `sweep()`; default 100 */
  sweepIntervalMs?: number;
}

export interface EmbeddedJobQueueOptions extends QueueRuleOptions {
  /** the queue's own directory, e.g. `<dataDir>/jobs` (made 0700; files 0600) */
  dir: string;
  /** fdatasync each group commit; default true */
  fsync?: boolean;
  /** compact once the log has grown this much (and twice the last snapshot); default 64 MiB */
  compactAfterBytes?: number;
  /**
   * told of failures no caller hears of, or that the operator must: a failed log write (its
   * operations are refused with JOB_QUEUE_UNAVAILABLE), a failed recovery, compaction or sweep;
   * default: a process warning
   */
  onError?: (error: GpufleetError) => void;
}

/** a lease outlives three missed pings of the worker SDK (RUNPOD_PING_INTERVAL, 10 s by default) */
export const DEFAULT_LEASE_MS = 30_000;

export interface QueueSettings {
  leaseMs: number;
  maxLostRetries: number;
  maxErrorRetries: number;
  compactAfterBytes: number;
  sweepIntervalMs: number;
  fsync: boolean;
  retention: Retention;
  clock: () => number;
}

export function settingsOf(opts: EmbeddedJobQueueOptions): QueueSettings {
  return {
    leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
    maxLostRetries: opts.maxLostRetries ?? 3,
    maxErrorRetries: opts.maxErrorRetries ?? 0,
    compactAfterBytes: opts.compactAfterBytes ?? 64 << 20,
    sweepIntervalMs: opts.sweepIntervalMs ?? 100,
    fsync: opts.fsync ?? true,
    retention: {
      asyncMs: opts.retention?.asyncMs ?? JOB_LIMITS.asyncRetention,
      syncMs: opts.retention?.syncMs ?? JOB_LIMITS.syncRetention,
    },
    clock: opts.clock ?? Date.now,
  };
}
