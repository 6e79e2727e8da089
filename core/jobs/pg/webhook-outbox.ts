// The webhook outbox of the PostgreSQL queue (the port's optional pendingWebhooks / webhookAttempted /
// webhookSettled, as the embedded queue keeps them in its log): a final job with a webhook gets its
// row in the transaction that makes it final, owned by the replica that sends it (onFinal there).
// At start a replica resumes its own deliveries and takes over those of replicas not seen lately.
import type pg from 'pg';
import type { Job } from '../job.ts';
import type { PendingWebhook } from '../job-queue.ts';
import { ALIVE_FOR_MS } from './replicas.ts';
import type { Query } from './statements.ts';

/** inside the transaction that makes the jobs final */
export async function queueWebhooks(c: pg.ClientBase, finals: readonly Job[], now: number, owner: string): Promise<void> {
  const hooks = finals.filter((j) => j.webhook !== undefined);
  if (hooks.length === 0) return;
  await c.query(
    `INSERT INTO gpufleet_job_webhooks (job_id, job, attempts, next_at, owner) SELECT id, job::json, 0, $3, $4 FROM unnest($1::text[], $2::text[]) AS h(id, job)
     ON CONFLICT (job_id) DO UPDATE SET job = EXCLUDED.job, attempts = 0, next_at = EXCLUDED.next_at, owner = EXCLUDED.owner`,
    [hooks.map((j) => j.id), hooks.map((j) => JSON.stringify(j)), now, owner],
  );
}

/** this replica's pending deliveries, and those of replicas not seen for a while (taken over) */
export async function takePendingWebhooks(q: Query, owner: string, now: number): Promise<PendingWebhook[]> {
  const { rows } = await q<{ job: string; attempts: number; next_at: string }>(
    `UPDATE gpufleet_job_webhooks w SET owner = $1
     WHERE owner = $1 OR NOT EXISTS (SELECT 1 FROM gpufleet_job_replicas r WHERE r.id = w.owner AND r.seen_at >= $2::bigint - ${ALIVE_FOR_MS})
     RETURNING job::text AS job, attempts, next_at`,
    [owner, now],
  );
  return rows.map((r) => ({ job: Object.freeze(JSON.parse(r.job) as Job), attempts: r.attempts, nextAt: Number(r.next_at) }));
}

export async function webhookAttempted(q: Query, jobId: string, attempts: number, nextAt: number): Promise<void> {
  await q('UPDATE gpufleet_job_webhooks SET attempts = $2, next_at = $3 WHERE job_id = $1', [jobId, attempts, nextAt]);
}

export async function webhookSettled(q: Query, jobId: string): Promise<void> {
  await q('DELETE FROM gpufleet_job_webhooks WHERE job_id = $1', [jobId]);
}
