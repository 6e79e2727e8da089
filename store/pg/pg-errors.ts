// What a failure from PostgreSQL means to the store: the database is unreachable (503, and the store
// watches for it to return), it cannot write (503, and /readyz says so until a write succeeds), it is
// short of resources for now (503), a serialisation conflict (run the transaction again), a GPU
// claimed concurrently (learn who holds it, place again), or anything else (a bug: it propagates as
// it is). Decided from SQLSTATE codes and constraint names, never from a message.
import pg from 'pg';
import { GpufleetError } from '../../model/index.ts';

const RETRYABLE = new Set(['40001', '40P01']);
/** admin shutdown, crash shutdown, cannot connect now, and the connection-exception class */
const UNREACHABLE = new Set(['57P01', '57P02', '57P03']);

/**
 * The server cannot write (docs/postgres.md, "A database that cannot write"): its disk is full
 * (53100 disk_full: a table or index could not be extended), a file write or read failed (58030
 * io_error), or it takes no writes at all (25006 read_only_sql_transaction: a standby after a
 * failover, or default_transaction_read_only, which managed servers set when their storage runs out).
 * Each stays so until something outside changes: the store is not ready until a write succeeds again.
 */
const CANNOT_WRITE = new Set(['53100', '58030', '25006']);

export const isDatabaseError = (e: unknown): e is pg.DatabaseError => e instanceof pg.DatabaseError;

/** serialization_failure or deadlock_detected: the transaction may simply be run again */
export const isRetryable = (e: unknown): boolean => isDatabaseError(e) && RETRYABLE.has(e.code ?? '');

/** a unique violation of gf_gpu_claims: another transaction took one of the GPUs this one proposed */
export const isClaimConflict = (e: unknown): boolean => isDatabaseError(e) && e.code === '23505' && e.constraint === 'gf_gpu_claims_pkey';

/**
 * a unique violation of gf_pods_overlay_ip or gf_accounts_overlay_vni: another transaction gave the
 * same overlay address to a pod (or VXLAN id to an account) first; this one runs again and draws another (core/pods/overlay-address.ts)
 */
export const isAddressConflict = (e: unknown): boolean =>
  isDatabaseError(e) && e.code === '23505' && (e.constraint === 'gf_pods_overlay_ip' || e.constraint === 'gf_accounts_overlay_vni');

/** the server's answer says it cannot write now (CANNOT_WRITE) */
export const cannotWrite = (e: unknown): boolean => isDatabaseError(e) && CANNOT_WRITE.has(e.code ?? '');

/**
 * The server is short of a resource for the moment (class 53, insufficient_resources, other than a
 * full disk: out of memory 53200, too many connections 53300, a configured limit 53400): this
 * request is refused with 503 and Retry-After, but the next one may pass, so readiness is not touched.
 */
export const isServerShort = (e: unknown): boolean => isDatabaseError(e) && (e.code ?? '').startsWith('53') && !CANNOT_WRITE.has(e.code ?? '');

/** a server error as the operator reads it: its message and its SQLSTATE */
export const describeDatabaseError = (e: unknown): string =>
  isDatabaseError(e) ? `${e.message} (SQLSTATE ${e.code ?? '?'})` : e instanceof Error ? e.message : String(e);

/**
 * The database cannot be reached: the socket failed or closed (errors that are not the server's
 * answer to a statement), or the server said it is shutting down or starting.
 */
export function isUnreachable(e: unknown): boolean {
  if (e instanceof GpufleetError) return false;
  if (isDatabaseError(e)) return UNREACHABLE.has(e.code ?? '') || (e.code ?? '').startsWith('08');
  return e instanceof Error;
}

/** 503 STORE_UNAVAILABLE with Retry-After: 1; `reason` (the cause's message by default) is the answer's `reason` */
export function unavailable(e: unknown, detail: string, reason: string = e instanceof Error ? e.message : String(e)): GpufleetError {
  return new GpufleetError('STORE_UNAVAILABLE', detail, { cause: e, headers: { 'retry-after': '1' }, fields: { reason } });
}
