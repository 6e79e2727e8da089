// One transaction on a connection of the pool: BEGIN, the caller's statements, COMMIT; ROLLBACK on a
// refusal. A connection that failed is destroyed, not given back; a database that cannot be reached
// is STORE_UNAVAILABLE (503) to the caller (queue-errors.ts).
import type pg from 'pg';
import { isConnectionError, queueError } from './queue-errors.ts';

export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  let c: pg.PoolClient;
  try {
    c = await pool.connect();
  } catch (e) {
    throw queueError(e);
  }
  let broken: Error | undefined;
  // a connection lost between two statements must not end the process
  const onError = (e: Error): void => {
    broken = e;
  };
  c.on('error', onError);
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (e) {
    if (!broken && isConnectionError(e)) broken = e as Error;
    if (!broken) await c.query('ROLLBACK').catch((err: Error) => (broken = err));
    throw queueError(e);
  } finally {
    c.removeListener('error', onError);
    c.release(broken);
  }
}
