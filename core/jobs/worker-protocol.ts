// The worker side of the job interface (runpod-compat.md 3.2): what an authenticated worker's
// job-take, job-stop, job-done, job-stream and ping calls do to the queue, and what the worker side
// (WorkerDirectory, through WorkerPorts) is told. The caller is always a WorkerIdentity the request
// guard checked against the route's worker and endpoint ids. docs/jobs.md, "The worker protocol".
import { check, compile, GpufleetError, jobDoneSchema, jobStreamSchema, type JobDoneInput, type JobStreamInput } from '../../model/index.ts';
import type { JobS3Config } from '../../model/index.ts';
import type { SecretBox, Store } from '../../store/index.ts';
import type { WorkerIdentity } from './worker-ports.ts';
import type { Job } from '../../model/index.ts';
import type { CompleteRequest, JobQueue } from './job-queue.ts';
import { openS3Config } from './job-s3-config.ts';
import type { WorkerPorts } from './worker-ports.ts';

const validateDone = compile<JobDoneInput>(jobDoneSchema);
const validateStream = compile<JobStreamInput>(jobStreamSchema);

/** job-take and job-stop hold this long before answering 204 (the worker's own timeout is 90 s) */
export const WORKER_POLL_MS = 60_000;
/** job-take-batch hands out at most this many jobs at once */
export const MAX_TAKE_BATCH = 64;

/** what a worker receives for a job: runpod-python requires `id` and `input`; other keys reach the handler */
export interface TakenJob {
  id: string;
  input: unknown;
  /** the job's s3Config as the user sent it (runpod-python's rp_upload reads it), secret included */
  s3Config?: JobS3Config;
}

/**
 * A ping that leaves out a job the queue says the worker holds proves the worker no longer has it
 * only when its list was taken after the take: a worker pings one at a time (runpod-python's ping
 * loop sends, then sleeps), so a ping's list is newer than the previous ping's arrival. A job taken
 * at least this long (ms) before the previous ping arrived is in every later list while the worker
 * runs it (this covers the moment between the take's answer and the worker's own bookkeeping).
 */
export const PING_LIST_LAG_MS = 1000;

export interface WorkerProtocolOptions {
  pollMs?: number;
  /** ms since the epoch, the queue's clock (tests move it) */
  clock?: () => number;
  /** opens a job's sealed s3Config secret for its worker (the box JobService sealed it with) */
  secretBox?: SecretBox;
  /** failures of the worker side's bookkeeping (seen, recycle) that must not fail the worker's call */
  onError?: (err: unknown, what: string) => void;
  /**
   * a final report as the queue should record it: public models' media become URLs and their cost is
   * written (core/public-models/job-output.ts, docs/public-endpoints.md); unchanged without it
   */
  finishResult?: (endpointId: string, result: CompleteRequest) => Promise<CompleteRequest>;
}

export type PingReport = { healthy: true; jobIds: string[] } | { healthy: false; check: string; reason: string };

export class WorkerProtocol {
  private readonly pollMs: number;
  private readonly clock: () => number;
  private readonly unsubscribe: () => void;
  /** when each worker's last healthy ping arrived (ms), in memory: after a restart the first ping only renews */
  private readonly lastPing = new Map<string, number>();

  constructor(
    private readonly queue: JobQueue,
    private readonly store: Store,
    private readonly workers: WorkerPorts,
    private readonly opts: WorkerProtocolOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? WORKER_POLL_MS;
    this.clock = opts.clock ?? Date.now;
    // a job past its executionTimeout is TIMED_OUT by the queue; the worker that ran it is replaced,
    // as a fault. This is the only path from the queue's onRecycle to the worker side.
    this.unsubscribe = queue.onRecycle((e) => {
      this.background(this.workers.recycle(e.workerId, `job ${e.jobId} ran past its executionTimeout`, { fault: true }), 'recycle');
    });
  }

  /**
   * job-take (max 1) and job-take-batch: long poll; [] when nothing came within the poll.
   * `jobInProgress` is the worker's `job_in_progress` (undefined when it sent none): 1 renews the
   * leases of the jobs it holds (it is alive and busy); 0 says it holds nothing, so a job the queue
   * still has running there will never be reported (its job-done was lost): it goes back to the
   * queue now, its retry counted, rather than when its lease runs out. Takes of one worker come one
   * after another (both SDKs), so a 0 is never older than a job handed to that worker. Aborting
   * `abort` ends the wait (the route does when the caller goes away); take aborts it itself when the
   * worker side refuses the call.
   */
  async take(w: WorkerIdentity, opts: { max: number; abort?: AbortController; jobInProgress?: boolean }): Promise<TakenJob[]> {
    await this.endpointExists(w);
    let held = await this.queue.heldBy(w.workerId);
    if (held.length > 0 && opts.jobInProgress === true) await this.queue.heartbeat(w.workerId, held);
    if (held.length > 0 && opts.jobInProgress === false) {
      await this.queue.workerLost(w.workerId, 'it asked for work with job_in_progress=0 while this job was running there: its result never arrived', held);
      held = await this.queue.heldBy(w.workerId);
    }
    // parked before the worker side hears of the call: if `seen` retires the worker (and reports it
    // lost to the queue), the parked take is answered [] rather than handed a job afterwards
    const abort = opts.abort ?? new AbortController();
    const taking = this.queue.take(w.endpointId, w.workerId, { max: opts.max, waitMs: this.pollMs, signal: abort.signal });
    try {
      await this.workers.seen(w.workerId, { healthy: true, inProgress: held, ...(opts.jobInProgress !== undefined ? { workerBusy: opts.jobInProgress } : {}) });
    } catch (e) {
      abort.abort();
      await taking.catch(() => undefined);
      throw e;
    }
    const jobs = await taking;
    if (jobs.length > 0) this.background(this.report(w.workerId), 'seen');
    return jobs.map((j) => this.forWorker(j));
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
      const result: CompleteRequest = {
        ...(input.output !== undefined ? { output: input.output } : {}),
        ...(error !== undefined ? { error } : {}),
      };
      job = await this.queue.complete(jobId, w.workerId, this.opts.finishResult ? await this.opts.finishResult(w.endpointId, result) : result);
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

  /**
   * ping: a heartbeat renewing the leases of the jobs it names, or its report that it is unhealthy.
   * A job the queue has running on the worker that the ping leaves out, taken well before the
   * worker's previous ping arrived (PING_LIST_LAG_MS), is no longer on the worker (finished with its
   * job-done lost, or never received): it goes back to the queue now, its retry counted.
   */
  async ping(w: WorkerIdentity, report: PingReport): Promise<void> {
    if (!report.healthy) {
      this.lastPing.delete(w.workerId);
      await this.workers.seen(w.workerId, { healthy: false, check: report.check, reason: report.reason });
      // it exits after this ping (runpod-python's fitness check): its jobs go back to the queue now
      await this.queue.workerLost(w.workerId, `the worker reported itself unhealthy: ${report.check}: ${report.reason}`);
      return;
    }
    const now = this.clock();
    const previous = this.lastPing.get(w.workerId);
    this.notePing(w.workerId, now);
    await this.queue.heartbeat(w.workerId, report.jobIds);
    if (previous !== undefined) {
      const listed = new Set(report.jobIds);
      const gone: string[] = [];
      for (const id of await this.queue.heldBy(w.workerId)) {
        if (listed.has(id)) continue;
        const job = await this.queue.get(id);
        if (job?.startedAt !== undefined && job.startedAt <= previous - PING_LIST_LAG_MS) gone.push(id);
      }
      if (gone.length > 0) await this.queue.workerLost(w.workerId, 'its pings no longer list this job: its result never arrived', gone);
    }
    await this.workers.seen(w.workerId, { healthy: true, inProgress: await this.queue.heldBy(w.workerId), workerBusy: report.jobIds.length > 0 });
  }

  private notePing(workerId: string, now: number): void {
    this.lastPing.set(workerId, now);
    // workers come and go: forget the ones silent for 10 minutes (they are retired long before)
    if (this.lastPing.size > 1000) for (const [id, at] of this.lastPing) if (now - at > 600_000) this.lastPing.delete(id);
  }

  close(): void {
    this.unsubscribe();
  }

  private forWorker(j: Job): TakenJob {
    const t: TakenJob = { id: j.id, input: j.input };
    if (j.s3Config !== undefined && this.opts.secretBox) t.s3Config = openS3Config(this.opts.secretBox, j.endpointId, j.s3Config);
    return t;
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
