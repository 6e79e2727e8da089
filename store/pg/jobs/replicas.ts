// The replicas serving one queue database. Each keeps a row fresh (seen_at, and how many workers wait
// in take on it per endpoint, for `depth`); a replica that stops refreshing is dead after a while.
// When a replica starts and finds no live one, the whole control plane was down: workers could not
// ping anyone, so every running job gets a full new lease (as the embedded queue does on restart).
import type pg from 'pg';
import { JOB_REPLICA_HEARTBEAT_MS } from '../../base/job-rows.ts';

/** a replica counts as alive for 5 heartbeats */
export const ALIVE_FOR_MS = 5 * JOB_REPLICA_HEARTBEAT_MS;
/** held by a replica joining and by a takeover of stopped replicas' webhook deliveries (webhook-outbox.ts) */
export const REPLICAS_LOCK = 0x67706a6f6272; // "gpjobr"

/** registers `id`; extends running leases to `now + leaseMs` when no other replica is alive */
export async function joinReplicas(pool: pg.Pool, id: string, now: number, leaseMs: number): Promise<{ leasesExtended: number }> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [REPLICAS_LOCK]);
    await c.query('DELETE FROM gf_job_replicas WHERE seen_at < $1', [now - Math.max(ALIVE_FOR_MS, leaseMs)]);
    const alive = await c.query('SELECT 1 FROM gf_job_replicas WHERE id <> $1 LIMIT 1', [id]);
    let leasesExtended = 0;
    if (alive.rowCount === 0) {
      const until = now + leaseMs;
      const r = await c.query(
        `UPDATE gf_jobs SET lease_expires_at = $1, due_at = LEAST($1, started_at + execution_timeout)
         WHERE status = 'IN_PROGRESS' AND lease_expires_at < $1`,
        [until],
      );
      leasesExtended = r.rowCount ?? 0;
    }
    await c.query(
      `INSERT INTO gf_job_replicas (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at`,
      [id, now],
    );
    await c.query('COMMIT');
    return { leasesExtended };
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** refreshes the replica's row with the workers waiting in take on it, per endpoint */
export async function refreshReplica(pool: pg.Pool, id: string, now: number, waiting: Record<string, number>): Promise<void> {
  await pool.query(
    `INSERT INTO gf_job_replicas (id, seen_at, waiting) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at, waiting = EXCLUDED.waiting`,
    [id, now, JSON.stringify(waiting)],
  );
}

export async function leaveReplicas(pool: pg.Pool, id: string): Promise<void> {
  await pool.query('DELETE FROM gf_job_replicas WHERE id = $1', [id]);
}

/** workers waiting in take on the other live replicas, for one endpoint */
export const OTHERS_WAITING_SQL = `COALESCE((SELECT sum((waiting ->> $1)::int) FROM gf_job_replicas
  WHERE id <> $3 AND seen_at >= $2::bigint - ${ALIVE_FOR_MS} AND waiting ? $1), 0)::int`;
