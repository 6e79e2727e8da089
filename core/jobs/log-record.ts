// One line of the job log: `<crc32 of the JSON, 8 hex digits> <JSON>\n`. The checksum tells a torn
// or damaged record from a good one on replay; JSON escapes newlines, so a record is one line.
import { crc32 } from 'node:zlib';
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

export function encodeRecord(rec: LogRecord): Buffer {
  const json = Buffer.from(JSON.stringify(rec));
  const out = Buffer.allocUnsafe(json.length + 10);
  out.write(crc32(json).toString(16).padStart(8, '0'), 0, 'latin1');
  out[8] = 0x20;
  json.copy(out, 9);
  out[out.length - 1] = 0x0a;
  return out;
}

/** decodes one line (without its newline); a string is the reason it is not a good record */
export function decodeRecord(line: Buffer): LogRecord | string {
  if (line.length < 10 || line[8] !== 0x20) return 'not a record (no checksum)';
  const want = Number.parseInt(line.toString('latin1', 0, 8), 16);
  const json = line.subarray(9);
  if (!Number.isInteger(want) || crc32(json) !== want) return 'checksum mismatch';
  let rec: unknown;
  try {
    rec = JSON.parse(json.toString('utf8'));
  } catch {
    return 'checksum matches but JSON does not parse';
  }
  const t = rec && typeof rec === 'object' ? (rec as { t?: unknown }).t : undefined;
  if (typeof t !== 'string' || !TYPES.has(t)) return `unknown record type ${JSON.stringify(t)}`;
  return rec as LogRecord;
}
