// The job queue's changes, one record each: what the embedded queue appends to its log (a RecordLog,
// store/base/record-log.ts; the file format is store/'s) and replays into its table, and what the
// PostgreSQL queue applies to a row. JobTable.apply says what each one does.
import type { FinalStatus, Job, JobPolicy, SealedS3Config } from '../../model/index.ts';

/** the fields fixed when a job is submitted */
export interface SubmittedJob {
  id: string;
  endpointId: string;
  accountId: string;
  input: unknown;
  webhook?: string;
  /** the secret sealed (never in clear in the log) */
  s3Config?: SealedS3Config;
  policy: JobPolicy;
  sync: boolean;
  createdAt: number;
}

/**
 * Why a job went back to the queue: `lost` (worker lost or lease expired) and `error` (handler
 * error, retried under the cap) count against the cap; `retry` is the user's and resets it;
 * `undelivered` is a take whose caller went away before it received the job, and counts nothing.
 */
export type RequeueCause = 'lost' | 'error' | 'retry' | 'undelivered';

export type LogRecord =
  | { t: 'enq'; job: SubmittedJob }
  | { t: 'take'; id: string; worker: string; at: number }
  | { t: 'prog'; id: string; at: number; output: unknown }
  | { t: 'chunk'; id: string; output: unknown }
  | { t: 'fin'; id: string; at: number; status: FinalStatus; output?: unknown; error?: string; expired?: true }
  | { t: 'rq'; id: string; at: number; cause: RequeueCause; error?: string }
  | { t: 'drop'; endpointId: string }
  /** `?ttl=` on status: the job's ttl now ends at `at + ttl` */
  | { t: 'ttl'; id: string; at: number; ttl: number }
  /** compaction: the whole state of one job, with its stream so far */
  | { t: 'put'; job: Job; stream: unknown[] }
  /** changes nothing: written to learn whether the log takes writes again after a failed one */
  | { t: 'nop' }
  /**
   * webhooks: a `fin` of a job with a webhook makes its delivery pending; `wh` records a failed
   * attempt (`attempts` made so far, the next one due at `nextAt`); `whx` clears it (delivered or
   * given up); `whp` is a pending delivery with its job, as compaction writes it
   */
  | { t: 'wh'; id: string; attempts: number; nextAt: number }
  | { t: 'whx'; id: string }
  | { t: 'whp'; job: Job; attempts: number; nextAt: number };

const TYPES = new Set<string>(['enq', 'take', 'prog', 'chunk', 'fin', 'rq', 'drop', 'put', 'ttl', 'nop', 'wh', 'whx', 'whp']);

/** null when `value` is one of the records above (by its type), else why it is not */
export function checkLogRecord(value: unknown): string | null {
  const t = value && typeof value === 'object' ? (value as { t?: unknown }).t : undefined;
  return typeof t === 'string' && TYPES.has(t) ? null : `unknown record type ${JSON.stringify(t)}`;
}
