// The embedded JobQueue: state in memory (job-table.ts), every change in the queue's log (a RecordLog
// of store/, job-log.ts) before it is acknowledged, replayed on open. See docs/jobs.md for the guarantees.
import { GpufleetError } from '../../model/index.ts';
import { isFinal, JOB_LIMITS, type EnqueueRequest, type Job } from '../../model/index.ts';
import type {
  CompleteRequest, DeleteEndpointResult, EndpointCounts, HeartbeatResult, JobQueue, PendingWebhook, QueueDepth, StreamRead, TakeOptions, WaitOptions,
} from './job-queue.ts';
import type { JobListFilter, LogRepair } from '../../store/index.ts';
import { logWriteBlocker, openJobLog, type JobLog } from './job-log.ts';
import { JobTable } from './job-table.ts';
import { submission, validateEnqueue } from './job-validation.ts';
import { asQueueError, QueueCore } from './queue-core.ts';
import { settingsOf, type EmbeddedJobQueueOptions } from './queue-options.ts';
import { longPoll } from './waiters.ts';

export class EmbeddedJobQueue extends QueueCore implements JobQueue {
  /** torn last records cut off when the log was opened (for the caller to log) */
  readonly repairs: readonly LogRepair[];
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly reported = new WeakSet<object>();
  private lastProbe = 0;

  private constructor(table: JobTable, log: JobLog, opts: EmbeddedJobQueueOptions, snapshotBytes: number, repairs: LogRepair[], onError: (e: GpufleetError) => void) {
    const settings = settingsOf(opts);
    super(table, log, settings, snapshotBytes, onError);
    this.repairs = repairs;
    const every = settings.sweepIntervalMs;
    if (every > 0) {
      this.timer = setInterval(() => this.tick(), every);
      this.timer.unref();
    }
  }

  static async open(opts: EmbeddedJobQueueOptions): Promise<EmbeddedJobQueue> {
    const { leaseMs, retention, fsync, clock } = settingsOf(opts);
    const table = new JobTable({ leaseMs, retention });
    const onError = opts.onError ?? ((e: GpufleetError) => process.emitWarning(e.message, { code: 'GPUFLEET_JOB_QUEUE' }));
    let queue: EmbeddedJobQueue | undefined;
    // each failure is told once, whether the log or the operation that met it reports it first
    const report = (e: GpufleetError): void => {
      if (queue?.reported.has(e)) return;
      queue?.reported.add(e);
      onError(e);
    };
    const { log, replay } = await openJobLog(opts.dir, fsync, (rec) => table.apply(rec), report);
    // running jobs get a fresh lease: their workers kept running while the control plane was down
    table.extendLeases(clock() + leaseMs);
    queue = new EmbeddedJobQueue(table, log, opts, replay.snapshotBytes, replay.repairs, report);
    return queue;
  }

  /**
   * The interval timer: due deadlines are applied; while the last log write failed and nothing was
   * written since, an empty record is written once a second, so the queue (and /readyz) learns that
   * the disk takes writes again without waiting for a user's change.
   */
  private tick(): void {
    if (this.closed) return;
    const blocked = logWriteBlocker(this.log) !== null;
    const now = Date.now();
    if (blocked && now - this.lastProbe >= 1000) {
      this.lastProbe = now;
      void this.run((fx) => void this.commit({ t: 'nop' }, fx)).catch((e: unknown) => this.onError(asQueueError(e, 'The job queue could not write its log')));
      return;
    }
    void this.sweep().catch((e: unknown) => this.onError(asQueueError(e, 'The job queue could not apply its due deadlines')));
  }

  async enqueue(req: EnqueueRequest): Promise<Job> {
    const policy = validateEnqueue(req);
    // as submitted; a waiting worker may hold it already when this resolves
    return this.run((fx) => this.commit({ t: 'enq', job: submission(req, policy, this.now()) }, fx)!);
  }

  async take(endpointId: string, workerId: string, opts: TakeOptions = {}): Promise<Job[]> {
    const max = opts.max ?? 1;
    if (!Number.isInteger(max) || max < 1) {
      throw new GpufleetError('VALIDATION_FAILED', 'max must be a positive integer', { errors: ['$.max: must be an integer >= 1'] });
    }
    const signal = opts.signal;
    const got = await this.run((fx) => {
      const jobs = this.takeNow(endpointId, workerId, max, fx);
      if (jobs.length > 0) return { jobs, seq: fx.seq };
      // parked in the same tick as the check, so an enqueue arriving during any await finds it
      return longPoll<Job[]>(this.waitOpts(opts), () => [], (settle) => this.takeWaiters.add(endpointId, { workerId, max, signal, settle }));
    });
    return 'jobs' in got ? this.deliver(got.jobs, got.seq, signal) : got;
  }

  progress(jobId: string, workerId: string, output: unknown): Promise<Job> {
    return this.run((fx) => {
      this.held(jobId, workerId);
      return this.commit({ t: 'prog', id: jobId, at: this.now(), output }, fx)!;
    });
  }

  appendStream(jobId: string, workerId: string, chunk: unknown): Promise<void> {
    return this.run((fx) => {
      this.held(jobId, workerId);
      this.commit({ t: 'chunk', id: jobId, output: chunk }, fx);
      this.table.renewLease(jobId, this.now() + this.settings.leaseMs);
    });
  }

  async readStream(jobId: string, from?: number, opts?: WaitOptions): Promise<StreamRead | undefined> {
    return this.run((): StreamRead | undefined | Promise<StreamRead | undefined> => {
      const job = this.table.find(jobId, this.now());
      if (!job || isFinal(job.status) || (opts?.waitMs ?? 0) <= 0) return this.readNow(jobId, from);
      const start = from ?? this.table.cursors.get(jobId) ?? 0;
      if ((this.table.streams.get(jobId)?.length ?? 0) > start) return this.readNow(jobId, from);
      // parked in the same tick as the check, so a chunk or final status committed meanwhile wakes it
      return longPoll<void>(this.waitOpts(opts), () => undefined, (settle) => this.streamWaiters.add(jobId, () => settle()))
        .then(() => (this.closed ? undefined : this.run(() => this.readNow(jobId, from))));
    });
  }

  private readNow(jobId: string, from: number | undefined): StreamRead | undefined {
    const job = this.table.find(jobId, this.now());
    if (!job) return undefined;
    const stream = this.table.streams.get(jobId) ?? [];
    const start = from ?? this.table.cursors.get(jobId) ?? 0;
    if (from === undefined) this.table.cursors.set(jobId, stream.length);
    return { status: job.status, chunks: stream.slice(start), next: stream.length };
  }

  complete(jobId: string, workerId: string, result: CompleteRequest): Promise<Job> {
    return this.run((fx) => {
      const held = this.held(jobId, workerId);
      const at = this.now();
      if (result.error !== undefined && held.autoRetries < this.settings.maxErrorRetries) {
        return this.commit({ t: 'rq', id: jobId, at, cause: 'error', error: result.error }, fx)!;
      }
      return this.commit({
        t: 'fin', id: jobId, at, status: result.error !== undefined ? 'FAILED' : 'COMPLETED',
        ...(result.output !== undefined ? { output: result.output } : {}),
        ...(result.error !== undefined ? { error: result.error } : {}),
      }, fx)!;
    });
  }

  heartbeat(workerId: string, jobIds: readonly string[]): Promise<HeartbeatResult> {
    // begin() runs first: a lease that already ran out is lost, not renewed
    return this.run(() => {
      const out: HeartbeatResult = { renewed: [], notHeld: [] };
      const until = this.now() + this.settings.leaseMs;
      for (const id of jobIds) {
        const job = this.table.jobs.get(id);
        if (job?.status === 'IN_PROGRESS' && job.workerId === workerId) {
          this.table.renewLease(id, until);
          out.renewed.push(id);
        } else out.notHeld.push(id);
      }
      return out;
    });
  }

  workerLost(workerId: string, reason: string, jobIds?: readonly string[]): Promise<Job[]> {
    return this.run((fx) => {
      const now = this.now();
      const only = jobIds ? new Set(jobIds) : null;
      const ids = [...(this.table.byWorker.get(workerId) ?? [])].filter((id) => !only || only.has(id));
      // not told to stop them: it said it has none, and the same worker may take one of them again
      const jobs = ids.map((id) => this.lose(this.table.jobs.get(id)!, reason, now, fx, false)!);
      if (only) return jobs;
      this.stops.forget(workerId);
      for (const w of this.takeWaiters.drainWhere((w) => w.workerId === workerId)) w.settle([]);
      return jobs;
    });
  }

  cancel(jobId: string): Promise<Job> {
    return this.run((fx) => {
      const job = this.found(jobId);
      if (job.status === 'CANCELLED') return job;
      if (isFinal(job.status)) {
        throw new GpufleetError('INVALID_TRANSITION', `job ${jobId} is ${job.status} and cannot be cancelled`, { fields: { jobId, status: job.status } });
      }
      if (job.status === 'IN_PROGRESS') fx.stops.push({ workerId: job.workerId!, jobId });
      return this.commit({ t: 'fin', id: jobId, at: this.now(), status: 'CANCELLED' }, fx)!;
    });
  }

  retry(jobId: string): Promise<Job> {
    return this.run((fx) => {
      const job = this.found(jobId);
      if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') {
        throw new GpufleetError('INVALID_TRANSITION', `only FAILED and TIMED_OUT jobs can be retried; job ${jobId} is ${job.status}`, {
          fields: { jobId, status: job.status },
        });
      }
      return this.commit({ t: 'rq', id: jobId, at: this.now(), cause: 'retry' }, fx)!;
    });
  }

  purge(endpointId: string): Promise<number> {
    return this.run((fx) => {
      const ids = this.table.nextQueued(endpointId, Number.POSITIVE_INFINITY);
      const at = this.now();
      for (const id of ids) this.commit({ t: 'fin', id, at, status: 'CANCELLED' }, fx);
      return ids.length;
    });
  }

  deleteEndpoint(endpointId: string): Promise<DeleteEndpointResult> {
    return this.run((fx) => {
      const at = this.now();
      const ids = [...(this.table.byEndpoint.get(endpointId) ?? [])];
      let cancelled = 0;
      for (const id of ids) {
        const job = this.table.jobs.get(id)!;
        if (isFinal(job.status)) continue;
        if (job.status === 'IN_PROGRESS') fx.stops.push({ workerId: job.workerId!, jobId: id });
        this.commit({ t: 'fin', id, at, status: 'CANCELLED' }, fx);
        cancelled++;
      }
      this.commit({ t: 'drop', endpointId }, fx);
      for (const w of this.takeWaiters.drain(endpointId)) w.settle([]);
      return { cancelled, removed: ids.length };
    });
  }

  get(jobId: string): Promise<Job | undefined> {
    return this.read(() => this.table.find(jobId, this.now()));
  }

  async setTtl(jobId: string, ttlMs: number): Promise<Job> {
    const lim = JOB_LIMITS.statusTtl;
    if (!Number.isInteger(ttlMs) || ttlMs < lim.min || ttlMs > lim.max) {
      throw new GpufleetError('VALIDATION_FAILED', `ttl must be an integer number of milliseconds from ${lim.min} to ${lim.max}`, {
        errors: [`$.ttl: must be an integer from ${lim.min} to ${lim.max}`],
      });
    }
    return this.run((fx) => {
      this.found(jobId);
      return this.commit({ t: 'ttl', id: jobId, at: this.now(), ttl: ttlMs }, fx)!;
    });
  }

  heldBy(workerId: string): Promise<string[]> {
    return this.read(() => this.table.heldBy(workerId));
  }

  async waitForFinal(jobId: string, opts?: WaitOptions): Promise<Job | undefined> {
    return this.run((): Job | undefined | Promise<Job | undefined> => {
      const job = this.table.find(jobId, this.now());
      if (!job || isFinal(job.status)) return job;
      return longPoll<Job | undefined>(this.waitOpts(opts), () => this.table.find(jobId, this.now()), (settle) => this.finalWaiters.add(jobId, settle));
    });
  }

  stopRequests(workerId: string, opts?: WaitOptions): Promise<string[]> {
    return this.stops.poll(workerId, this.waitOpts(opts));
  }

  counts(endpointId: string): Promise<EndpointCounts> {
    return this.read(() => this.table.countsOf(endpointId));
  }

  depth(endpointId: string): Promise<QueueDepth> {
    return this.read(() => ({ ...this.table.depthOf(endpointId, this.now()), waitingWorkers: this.takeWaiters.count(endpointId) }));
  }

  async pendingWebhooks(): Promise<PendingWebhook[]> {
    return this.run(() => [...this.table.webhooks.values()]);
  }

  webhookAttempted(jobId: string, attempts: number, nextAt: number): Promise<void> {
    return this.run((fx) => {
      if (this.table.webhooks.has(jobId)) this.commit({ t: 'wh', id: jobId, attempts, nextAt }, fx);
    });
  }

  webhookSettled(jobId: string): Promise<void> {
    return this.run((fx) => {
      if (this.table.webhooks.has(jobId)) this.commit({ t: 'whx', id: jobId }, fx);
    });
  }

  /** the port's page of retained COMPLETED jobs after `after` in (finishedAt, id) order (public model charges) */
  completedJobs(endpointId: string, after: { finishedAt: number; id: string }, limit: number): Promise<Job[]> {
    return this.run(() => this.table.completedAfter(endpointId, after, limit, this.now()));
  }

  listJobs(filter: JobListFilter): Promise<Job[]> {
    return this.read(() => this.table.listJobs(filter, this.now()));
  }

  /** records appended and group commits done since open; bytes a compaction would reclaim */
  logStats(): { records: number; commits: number; bytesSinceCompaction: number } {
    return { ...this.log.stats, bytesSinceCompaction: this.log.bytesSinceCompaction };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    await this.shutdown();
  }

  private found(jobId: string): Job {
    const job = this.table.find(jobId, this.now());
    if (!job) throw new GpufleetError('NOT_FOUND', `job ${jobId} not found`, { fields: { jobId } });
    return job;
  }

  /** the job, if `workerId` holds it IN_PROGRESS; otherwise why not, as an error */
  private held(jobId: string, workerId: string): Job {
    const job = this.found(jobId);
    if (isFinal(job.status)) {
      throw new GpufleetError('JOB_ALREADY_FINAL', `job ${jobId} is already ${job.status}`, { fields: { jobId, status: job.status, workerId: job.workerId } });
    }
    if (job.status !== 'IN_PROGRESS' || job.workerId !== workerId) {
      throw new GpufleetError('JOB_LEASE_LOST', `worker ${workerId} does not hold job ${jobId} (it is ${job.status})`, {
        fields: { jobId, status: job.status, workerId: job.workerId },
      });
    }
    return job;
  }
}
