// What the sweep does with a row whose deadline came (the same decisions as the embedded queue's
// QueueCore.begin): a queued job past its ttl is TIMED_OUT and gone at once; a running one past its
// executionTimeout is TIMED_OUT, its worker told to stop and named for recycling; one whose lease ran
// out goes back to the queue (or FAILED past the cap); a result past its retention is dropped.
import { isFinal, type Job } from '../../../model/index.ts';
import type { TableOptions } from '../job-table.ts';
import type { LogRecord } from '../log-record.ts';
import type { JobRow, RowWrite } from '../../../store/index.ts';
import type { Effects } from './effects.ts';
import { transition } from './job-rules.ts';

export interface DueWork {
  /** records to apply to locked rows */
  items: { row: JobRow; rec: LogRecord }[];
  /** rows to delete: queued jobs past their ttl, results past their retention */
  gone: string[];
  /** rows whose due_at is behind (a lease renewed since): rewritten as they are */
  stale: Omit<RowWrite, 'dueAt'>[];
}

export interface DueRules {
  table: TableOptions;
  maxLostRetries: number;
}

/** an attempt whose worker is gone: back to the queue under the cap, else FAILED */
export function lostRecord(job: Job, reason: string, now: number, fx: Effects, tellWorker: boolean, maxLostRetries: number): LogRecord {
  const worker = job.workerId!;
  if (tellWorker) fx.stops.push({ workerId: worker, jobId: job.id });
  if (job.autoRetries < maxLostRetries) return { t: 'rq', id: job.id, at: now, cause: 'lost', error: `worker ${worker}: ${reason}` };
  const error = `worker ${worker}: ${reason}; not retried again after ${job.autoRetries} automatic retries`;
  return { t: 'fin', id: job.id, at: now, status: 'FAILED', error };
}

export function dueWork(rows: readonly JobRow[], now: number, rules: DueRules, fx: Effects): DueWork {
  const out: DueWork = { items: [], gone: [], stale: [] };
  for (const row of rows) {
    const job = row.job;
    if (job.status === 'IN_QUEUE' && job.expiresAt! <= now) {
      const error = `the job's ttl of ${job.policy.ttl} ms ended before a worker took it`;
      fx.finals.push(transition(job, { t: 'fin', id: job.id, at: now, status: 'TIMED_OUT', error, expired: true }, rules.table));
      out.gone.push(job.id); // gone at once (404), as on the public platform
    } else if (job.status === 'IN_PROGRESS') {
      const lease = job.leaseExpiresAt!;
      const exec = job.startedAt! + job.policy.executionTimeout;
      if (exec <= now && exec <= lease) {
        const error = `execution timeout of ${job.policy.executionTimeout} ms exceeded`;
        out.items.push({ row, rec: { t: 'fin', id: job.id, at: now, status: 'TIMED_OUT', error } });
        fx.stops.push({ workerId: job.workerId!, jobId: job.id });
        fx.recycles.push({ workerId: job.workerId!, jobId: job.id, reason: 'execution-timeout' });
      } else if (lease <= now) {
        const reason = `its lease expired (no heartbeat for ${rules.table.leaseMs} ms)`;
        out.items.push({ row, rec: lostRecord(job, reason, now, fx, true, rules.maxLostRetries) });
      } else out.stale.push({ before: row, after: job });
    } else if (isFinal(job.status) && job.expiresAt! <= now) out.gone.push(job.id);
    else out.stale.push({ before: row, after: job });
  }
  return out;
}
