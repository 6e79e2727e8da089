// What a failure from PostgreSQL means to the store: the database is unreachable (503, and the store
// watches for it to return), a serialisation conflict (run the transaction again), a GPU claimed
// concurrently (learn who holds it, place again), or anything else (a bug: it propagates as it is).
// Decided from SQLSTATE codes and constraint names, never from a message.
import pg from 'pg';
import { GpufleetError } from '../../model/index.ts';

const RETRYABLE = new Set(['40001', '40P01']);
/** admin shutdown, crash shutdown, cannot connect now, and the connection-exception class */
const UNREACHABLE = new Set(['57P01', '57P02', '57P03']);

export const isDatabaseError = (e: unknown): e is pg.DatabaseError => e instanceof pg.DatabaseError;

/** serialization_failure or deadlock_detected: the transaction may simply be run again */
export const isRetryable = (e: unknown): boolean => isDatabaseError(e) && RETRYABLE.has(e.code ?? '');

/** a unique violation of gf_gpu_claims: another transaction took one of the GPUs this one proposed */
export const isClaimConflict = (e: unknown): boolean => isDatabaseError(e) && e.code === '23505' && e.constraint === 'gf_gpu_claims_pkey';

/**
 * The database cannot be reached: the socket failed or closed (errors that are not the server's
 * answer to a statement), or the server said it is shutting down or starting.
 */
export function isUnreachable(e: unknown): boolean {
  if (e instanceof GpufleetError) return false;
  if (isDatabaseError(e)) return UNREACHABLE.has(e.code ?? '') || (e.code ?? '').startsWith('08');
  return e instanceof Error;
}

export function unavailable(e: unknown, detail: string): GpufleetError {
  return new GpufleetError('STORE_UNAVAILABLE', detail, {
    cause: e,
    headers: { 'retry-after': '1' },
    fields: { reason: e instanceof Error ? e.message : String(e) },
  });
}
