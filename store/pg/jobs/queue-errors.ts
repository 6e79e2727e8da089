// The job queue's database failures as its callers see them, as the PostgreSQL store answers: 503
// (STORE_UNAVAILABLE, retry) while the database is unreachable, cannot write or is short of memory or
// connections; anything else as it is. And what a failure says of the database (JobRowsFailure), so
// core/jobs keeps /readyz's answer without reading PostgreSQL's error codes itself.
import { GpufleetError } from '../../../model/index.ts';
import type { JobRowsFailure } from '../../base/job-rows.ts';
import { cannotWrite, describeDatabaseError, isServerShort, unavailable } from '../pg-errors.ts';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03']);

/** the database cannot be reached, or went away mid-call (not a refused statement) */
export function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(e.message);
}

/**
 * A failure of the database as the queue's callers see it, as the PostgreSQL store answers: 503 while
 * it is unreachable, while it cannot write (a full disk, an I/O error, read-only: store/pg/pg-errors.ts
 * cannotWrite) and while it is short of memory or connections; anything else as it is.
 */
export function queueError(e: unknown): unknown {
  if (e instanceof GpufleetError) return e;
  if (cannotWrite(e) || isServerShort(e))
    return unavailable(e, `the job queue's database cannot take this change now (${describeDatabaseError(e)}); it was not applied; retry`, describeDatabaseError(e));
  if (!isConnectionError(e)) return e;
  return unavailable(e, "the job queue's database is unavailable (this request may not have been applied); retry");
}

/** queueError's answer, and whether the database is unreachable or cannot write (a transaction's failure comes already as STORE_UNAVAILABLE: its cause decides) */
export function queueFailure(e: unknown): JobRowsFailure {
  const error = queueError(e);
  if (!(error instanceof GpufleetError) || error.code !== 'STORE_UNAVAILABLE') return { error };
  const cause = error.cause ?? e;
  if (cannotWrite(cause)) return { error, unwritable: describeDatabaseError(cause) };
  if (isServerShort(cause)) return { error };
  return { error, unreachable: String(error.fields.reason ?? error.message) };
}
