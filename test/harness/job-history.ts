// What the job queue did to each job, seen through its port (core/jobs/job-queue.ts), so the same on
// either store (the embedded queue's log or PostgreSQL): the worker each attempt was handed to
// (`take`), the jobs of a worker given up for lost that went back to the queue and why (`workerLost`,
// the record's `worker <id>: <reason>`), and every final status (`onFinal`, which both queues call once
// per job reaching one, on the replica that made the change). Fault tests check a job's history with it
// (taken twice, requeued once as lost, COMPLETED once) where they once read the embedded log.
// A requeue by the deadline sweep (an expired lease) is not seen here: such a test also checks
// `retries`, which counts every requeue.
import type { JobQueue } from '../../core/index.ts';
import { waitFor } from './wait-for.ts';
import type { FinalStatus, Job } from '../../model/index.ts';

export type JobEvent =
  | { t: 'take'; worker: string }
  | { t: 'rq'; cause: 'lost'; error: string }
  | { t: 'fin'; status: FinalStatus; error?: string };

export interface JobHistory {
  /** what happened to job `id` so far, in order */
  of(id: string): JobEvent[];
  /**
   * resolves once job `id` has had a final status told: a reader of the job (status, runsync) can
   * see it final a moment before the queue's listeners are told
   */
  final(id: string, timeoutMs?: number): Promise<void>;
  /** stops recording; the queue is as it was */
  stop(): void;
}

/** records from now on; call before the jobs it is asked about are submitted */
export function recordJobHistory(queue: JobQueue): JobHistory {
  const events = new Map<string, JobEvent[]>();
  const add = (id: string, e: JobEvent): void => {
    const list = events.get(id) ?? [];
    list.push(e);
    events.set(id, list);
  };
  const { take, workerLost } = queue;
  const own = { take: Object.hasOwn(queue, 'take'), workerLost: Object.hasOwn(queue, 'workerLost') };
  queue.take = async (endpointId, workerId, opts) => {
    const jobs = await take.call(queue, endpointId, workerId, opts);
    for (const j of jobs) add(j.id, { t: 'take', worker: workerId });
    return jobs;
  };
  queue.workerLost = async (workerId, reason, jobIds) => {
    const jobs = await workerLost.call(queue, workerId, reason, jobIds);
    // past the retry cap a lost job is FAILED instead: onFinal tells that one
    for (const j of jobs) if (j.status === 'IN_QUEUE') add(j.id, { t: 'rq', cause: 'lost', error: `worker ${workerId}: ${reason}` });
    return jobs;
  };
  const off = queue.onFinal((j: Job) => add(j.id, { t: 'fin', status: j.status as FinalStatus, ...(j.error !== undefined ? { error: j.error } : {}) }));
  return {
    of: (id) => [...(events.get(id) ?? [])],
    async final(id, timeoutMs = 10_000) {
      await waitFor(`a final status of job ${id} told`, async () => events.get(id)?.some((e) => e.t === 'fin') || null, timeoutMs, 20);
    },
    stop() {
      off();
      // the queue's own methods again (a class's live on its prototype)
      if (own.take) queue.take = take;
      else delete (queue as Partial<JobQueue>).take;
      if (own.workerLost) queue.workerLost = workerLost;
      else delete (queue as Partial<JobQueue>).workerLost;
    },
  };
}
