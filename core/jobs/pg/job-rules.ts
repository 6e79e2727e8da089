// The rules of a job row of the PostgreSQL queue: transitions computed by the embedded queue's own
// JobTable (the same `apply` of the same records), so both queues change a job in exactly the same
// way; which jobs are still visible, each row's next deadline and its lane in the queue. The store
// (store/pg/jobs/) maps the result onto columns and writes it.
import type { Job } from '../../../model/index.ts';
import { JobTable, type TableOptions } from '../job-table.ts';
import type { LogRecord } from '../log-record.ts';

/** the job unless it is gone: a result past its retention, or a queued job past its ttl */
export function visible(job: Job, now: number): boolean {
  return job.status === 'IN_PROGRESS' || job.expiresAt === undefined || job.expiresAt > now;
}

/** the job after `rec`, as the embedded queue's table computes it (undefined: `rec` does not apply) */
export function transition(old: Job, rec: LogRecord, opts: TableOptions): Job {
  const t = new JobTable(opts);
  t.apply({ t: 'put', job: old, stream: [] });
  return t.apply(rec) ?? old;
}

/** the job as first queued */
export function submitted(rec: Extract<LogRecord, { t: 'enq' }>, opts: TableOptions): Job {
  return new JobTable(opts).apply(rec)!;
}

/** when the row must next be looked at by the sweeper */
export function dueAt(job: Job): number | null {
  if (job.status === 'IN_PROGRESS') return Math.min(job.leaseExpiresAt ?? Number.MAX_SAFE_INTEGER, job.startedAt! + job.policy.executionTimeout);
  return job.expiresAt ?? null;
}

/** the lane of a job entering the queue: requeued jobs first, lowPriority last */
export function laneOf(job: Job, requeued: boolean): number {
  return job.policy.lowPriority ? 2 : requeued ? 0 : 1;
}
