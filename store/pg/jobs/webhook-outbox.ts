// The webhook outbox of the PostgreSQL queue (the port's optional pendingWebhooks / webhookAttempted /
// webhookSettled, as the embedded queue keeps them in its log): a final job with a webhook gets its
// row in the transaction that makes it final, owned by the replica that sends it (onFinal there).
// Every replica's sender asks again every heartbeat (core's WEBHOOK_POLL_MS) for the deliveries of replicas that stopped
// (cleanly: their row in gf_job_replicas is gone; or dead: not seen for ALIVE_FOR_MS) and takes
// them over. Takeovers hold the replicas' lock, as a replica joining does, so each sees the others'
// (and every join) committed: a delivery is taken by exactly one replica, never by two.
import type pg from 'pg';
import type { Job } from '../../../model/index.ts';
import type { PendingWebhookRow } from '../../base/job-rows.ts';
import { ALIVE_FOR_MS, REPLICAS_LOCK } from './replicas.ts';
import type { Query } from './statements.ts';

/** inside the transaction that makes the jobs final */
export async function queueWebhooks(c: pg.ClientBase, finals: readonly Job[], now: number, owner: string): Promise<void> {
  const hooks = finals.filter((j) => j.webhook !== undefined);
  if (hooks.length === 0) return;
  await c.query(
    `INSERT INTO gf_job_webhooks (job_id, job, attempts, next_at, owner) SELECT id, job::json, 0, $3, $4 FROM unnest($1::text[], $2::text[]) AS h(id, job)
     ON CONFLICT (job_id) DO UPDATE SET job = EXCLUDED.job, attempts = 0, next_at = EXCLUDED.next_at, owner = EXCLUDED.owner`,
    [hooks.map((j) => j.id), hooks.map((j) => JSON.stringify(j)), now, owner],
  );
}

const PENDING_COLUMNS = 'job::text AS job, attempts, next_at';
type PendingRow = { job: string; attempts: number; next_at: string };

/**
 * Inside a transaction: the deliveries of replicas that stopped, now `owner`'s; with `own`, also
 * those `owner` had already (a restart with the same name resumes them).
 */
export async function takePendingWebhooks(c: pg.ClientBase, owner: string, now: number, own: boolean): Promise<PendingWebhookRow[]> {
  await c.query('SELECT pg_advisory_xact_lock($1)', [REPLICAS_LOCK]);
  const mine = own ? (await c.query<PendingRow>(`SELECT ${PENDING_COLUMNS} FROM gf_job_webhooks WHERE owner = $1`, [owner])).rows : [];
  const { rows: taken } = await c.query<PendingRow>(
    `UPDATE gf_job_webhooks w SET owner = $1
     WHERE owner <> $1 AND NOT EXISTS (SELECT 1 FROM gf_job_replicas r WHERE r.id = w.owner AND r.seen_at >= $2::bigint - ${ALIVE_FOR_MS})
     RETURNING ${PENDING_COLUMNS}`,
    [owner, now],
  );
  return [...mine, ...taken].map((r) => ({ job: Object.freeze(JSON.parse(r.job) as Job), attempts: r.attempts, nextAt: Number(r.next_at) }));
}

/** a failed attempt, recorded only while `owner` still has the delivery (a replica that stalled past its takeover does not) */
export async function webhookAttempted(q: Query, jobId: string, owner: string, attempts: number, nextAt: number): Promise<void> {
  await q('UPDATE gf_job_webhooks SET attempts = $3, next_at = $4 WHERE job_id = $1 AND owner = $2', [jobId, owner, attempts, nextAt]);
}

export async function webhookSettled(q: Query, jobId: string, owner: string): Promise<void> {
  await q('DELETE FROM gf_job_webhooks WHERE job_id = $1 AND owner = $2', [jobId, owner]);
}
