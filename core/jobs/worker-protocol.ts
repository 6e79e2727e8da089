// The worker side of the job interface (runpod-compat.md 3.2): what an authenticated worker's
// job-take, job-stop, job-done, job-stream and ping calls do to the queue, and what the worker side
// (WorkerDirectory, through WorkerPorts) is told. The caller is always a WorkerIdentity the request
// guard checked against the route's worker and endpoint ids. docs/jobs.md, "The worker protocol".
import { check, compile, GpufleetError, jobDoneSchema, jobStreamSchema, type JobDoneInput, type JobStreamInput } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { WorkerIdentity } from '../serverless/worker-directory.ts';
import type { Job } from './job.ts';
import type { JobQueue } from './job-queue.ts';
import type { WorkerPorts } from './worker-ports.ts';

const validateDone = compile<JobDoneInput>(jobDoneSchema);
const validateStream = compile<JobStreamInput>(jobStreamSchema);

/** job-take and job-stop hold this long before answering 204 (the worker's own timeout is 90 s) */
export const WORKER_POLL_MS = 60_000;
/** job-take-batch hands out at most this many jobs at once */
export const MAX_TAKE_BATCH = 64;

/** what a worker receives for a job: runpod-python requires `id` and `input` */
export interface TakenJob {
  id: string;
  input: unknown;
}

export interface WorkerProtocolOptions {
  pollMs?: number;
  /** failures of the worker side's bookkeeping (seen, recycle) that must not fail the worker's call */
  onError?: (err: unknown, what: string) => void;
}

export type PingReport = { healthy: true; jobIds: string[] } | { healthy: false; check: string; reason: string };

export class WorkerProtocol {
  private readonly pollMs: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly queue: JobQueue,
    private readonly store: Store,
    private readonly workers: WorkerPorts,
    private readonly opts: WorkerProtocolOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? WORKER_POLL_MS;
    // a job past its executionTimeout is TIMED_OUT by the queue; the worker that ran it is replaced
    this.unsubscribe = queue.onRecycle((e) => {
      this.background(this.workers.recycle(e.workerId, `job ${e.jobId} ran past its executionTimeout`), 'recycle');
    });
  }

  /** job-take (max 1) and job-take-batch: long poll; [] when nothing came within the poll */
  async take(w: WorkerIdentity, opts: { max: number; signal?: AbortSignal }): Promise<TakenJob[]> {
    await this.endpointExists(w);
    const held = await this.queue.heldBy(w.workerId);
    // parked before the worker side hears of the call: if `seen` retires the worker (and reports it
    // lost to the queue), the parked take is answered [] rather than handed a job afterwards
    const failed = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, failed.signal]) : failed.signal;
    const taking = this.queue.take(w.endpointId, w.workerId, { max: opts.max, waitMs: this.pollMs, signal });
    try {
      await this.workers.seen(w.workerId, { healthy: true, inProgress: held });
    } catch (e) {
      failed.abort();
      await taking.catch(() => undefined);
      throw e;
    }
    const jobs = await taking;
    if (jobs.length > 0) this.background(this.report(w.workerId), 'seen');
    return jobs.map((j) => ({ id: j.id, input: j.input }));
  }

  /** job-stop: the ids of jobs the worker must stop (cancelled, timed out, lost), or [] after the poll */
  async stopRequests(w: WorkerIdentity, signal?: AbortSignal): Promise<string[]> {
    return this.queue.stopRequests(w.workerId, { waitMs: this.pollMs, ...(signal ? { signal } : {}) });
  }

  /**
   * job-done: `status: IN_PROGRESS` is a progress update; anything else is the attempt's final report
   * (`error` makes it a failure). `stopPod: true` recycles the worker afterwards.
   */
  async done(w: WorkerIdentity, jobId: string, body: unknown): Promise<Job> {
    const input = check(validateDone, body, 'job-done body');
    await this.ownJob(w, jobId);
    let job: Job;
    if (input.status === 'IN_PROGRESS') job = await this.queue.progress(jobId, w.workerId, input.output);
    else {
      const error = input.error === undefined || input.error === null ? undefined : typeof input.error === 'string' ? input.error : JSON.stringify(input.error);
      job = await this.queue.complete(jobId, w.workerId, {
        ...(input.output !== undefined ? { output: input.output } : {}),
        ...(error !== undefined ? { error } : {}),
      });
      await this.report(w.workerId);
    }
    if (input.stopPod === true) await this.workers.recycle(w.workerId, `the worker asked to be recycled after job ${jobId} (stopPod / refresh_worker)`);
    return job;
  }

  /** job-stream: one streamed item of a job the worker holds */
  async stream(w: WorkerIdentity, jobId: string, body: unknown): Promise<void> {
    const input = check(validateStream, body, 'job-stream body');
    await this.ownJob(w, jobId);
    await this.queue.appendStream(jobId, w.workerId, input.output);
  }

  /** ping: a heartbeat renewing the leases of the jobs it names, or its report that it is unhealthy */
  async ping(w: WorkerIdentity, report: PingReport): Promise<void> {
    if (!report.healthy) {
      await this.workers.seen(w.workerId, { healthy: false, check: report.check, reason: report.reason });
      // it exits after this ping (runpod-python's fitness check): its jobs go back to the queue now
      await this.queue.workerLost(w.workerId, `the worker reported itself unhealthy: ${report.check}: ${report.reason}`);
      return;
    }
    await this.queue.heartbeat(w.workerId, report.jobIds);
    await this.report(w.workerId);
  }

  close(): void {
    this.unsubscribe();
  }

  /** tells the worker side the worker is alive, with the jobs it holds per the queue */
  private async report(workerId: string): Promise<void> {
    await this.workers.seen(workerId, { healthy: true, inProgress: await this.queue.heldBy(workerId) });
  }

  private background(p: Promise<unknown>, what: string): void {
    p.catch((err: unknown) => this.opts.onError?.(err, what));
  }

  private async endpointExists(w: WorkerIdentity): Promise<void> {
    const e = await this.store.get('endpoints', w.endpointId);
    if (!e || e.accountId !== w.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${w.endpointId} was not found.`);
  }

  /** a job of the worker's endpoint (another endpoint's job is 404, as if it did not exist) */
  private async ownJob(w: WorkerIdentity, jobId: string): Promise<void> {
    const job = await this.queue.get(jobId);
    if (!job || job.endpointId !== w.endpointId) throw new GpufleetError('NOT_FOUND', `Job ${jobId} was not found.`, { fields: { jobId } });
  }
}
