// progressUpdate(job, value): runpod-python's progress_update. Jobs in flight on any worker of this
// process register a sender here, so a handler only needs the job to report progress.
import type { Job } from './types.ts';

type Sender = (value: unknown) => Promise<void>;
const senders = new Map<string, Sender>();

export function registerProgressSender(jobId: string, send: Sender): () => void {
  senders.set(jobId, send);
  return () => {
    if (senders.get(jobId) === send) senders.delete(jobId);
  };
}

/**
 * Posts `{"status":"IN_PROGRESS","output":value}` to the job's job-done URL (a progress update, not a
 * final result). Never rejects, so it is safe to call without awaiting: failures are logged, and an
 * update for a job that is no longer in progress here is dropped. The job's final result is posted
 * only after its pending progress updates, in order.
 */
export function progressUpdate(job: Pick<Job, 'id'> | string, value: unknown): Promise<void> {
  const id = typeof job === 'string' ? job : job.id;
  const send = senders.get(id);
  if (!send) {
    process.stderr.write(`worker | progressUpdate: job ${id} is not in progress on this worker; dropped\n`);
    return Promise.resolve();
  }
  return send(value);
}
