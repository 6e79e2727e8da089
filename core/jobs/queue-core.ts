// The machinery under the embedded queue's operations. Each operation runs synchronously up to one
// await: it starts with `begin()` (deadlines that are due are applied first: ttl, lease, execution
// timeout, retention), applies its records with `commit()` (memory and log together), hands newly
// queued jobs to waiting workers, and `finish()` waits for the fsync that covers its records before
// it answers and before anyone is told (final waiters, onFinal, job-stop, recycle).
//
// A failed write refuses the operations whose records it held (JOB_QUEUE_UNAVAILABLE, 503). Their
// changes were already applied in memory, so the next operation first recovers: the log is cut back
// to what is durable and the table is rebuilt from it, as on a restart (`recover`).
import { GpufleetError } from '../../model/index.ts';
import { isFinal, type Job } from '../../model/index.ts';
import type { RecycleEvent, WaitOptions } from './job-queue.ts';
import { logWriteBlocker, type JobLog } from './job-log.ts';
import { JobTable } from './job-table.ts';
import type { LogRecord } from './log-record.ts';
import type { QueueSettings } from './queue-options.ts';
import { StopChannel, WaiterSet } from './waiters.ts';

export interface Effects {
  /** the last log seq this operation appended (0: none) */
  seq: number;
  finals: Job[];
  stops: { workerId: string; jobId: string }[];
  recycles: RecycleEvent[];
  /** endpoints that got a queued job: waiting workers are offered it */
  ready: Set<string>;
  /** jobs that got a stream chunk: stream readers waiting on them are woken */
  chunks: Set<string>;
}

export function newEffects(): Effects {
  return { seq: 0, finals: [], stops: [], recycles: [], ready: new Set(), chunks: new Set() };
}

export interface TakeWaiter {
  workerId: string;
  max: number;
  signal: AbortSignal | undefined;
  settle: (jobs: Job[] | Promise<Job[]>) => void;
}

export abstract class QueueCore {
  protected readonly takeWaiters = new WaiterSet<string, TakeWaiter>();
  protected readonly finalWaiters = new WaiterSet<string, (job: Job | undefined) => void>();
  /** stream readers waiting for a chunk or the final status of a job */
  protected readonly streamWaiters = new WaiterSet<string, () => void>();
  protected readonly stops = new StopChannel();
  private readonly finalListeners = new Set<(job: Job) => void>();
  private readonly recycleListeners = new Set<(e: RecycleEvent) => void>();
  private compacting: Promise<void> | null = null;
  private recovering: Promise<void> | null = null;
  protected closed = false;
  /** the log record of the last change applied to the table (0: none since the table was built from the log) */
  private appliedSeq = 0;

  protected constructor(
    /** replaced by a table rebuilt from the log when the queue recovers from a failed write */
    protected table: JobTable,
    protected readonly log: JobLog,
    protected readonly settings: QueueSettings,
    private lastSnapshotBytes: number,
    /** failures nobody else hears of: a failed log write, compaction, sweep or recovery */
    protected readonly onError: (e: GpufleetError) => void,
  ) {}

  /** why the queue cannot make changes durable right now (closed, its last log write failed), or null */
  writeBlocker(): string | null {
    if (this.closed) return 'the job queue is closed';
    return logWriteBlocker(this.log);
  }

  onFinal(listener: (job: Job) => void): () => void {
    this.finalListeners.add(listener);
    return () => this.finalListeners.delete(listener);
  }

  onRecycle(listener: (event: RecycleEvent) => void): () => void {
    this.recycleListeners.add(listener);
    return () => this.recycleListeners.delete(listener);
  }

  /** applies every deadline that is due (the interval timer calls this too) */
  async sweep(): Promise<void> {
    if (this.log.failure) await this.recover();
    await this.finish(this.begin());
  }

  /** writes a snapshot of the live jobs and drops the log generations it covers */
  compact(): Promise<void> {
    this.compacting ??= this.runCompaction().finally(() => {
      this.compacting = null;
    });
    return this.compacting;
  }

  protected now(): number {
    return this.settings.clock();
  }

  /**
   * Runs one operation: `fn` runs synchronously between `begin()` and `finish()`, which runs even
   * when `fn` throws (the due deadlines `begin()` applied must still become durable and be told).
   */
  protected async run<T>(fn: (fx: Effects) => T): Promise<T> {
    if (this.log.failure) await this.recover();
    const fx = this.begin();
    let out: T;
    try {
      out = fn(fx);
    } finally {
      await this.finish(fx);
    }
    return out;
  }

  /**
   * A read-only operation. What it sees may include changes applied in memory whose records are not
   * durable yet (another operation's, waiting for its fdatasync): it is answered once they are, so a
   * caller never sees a state a crash could take back (a COMPLETED that comes back IN_PROGRESS); if
   * their write fails, the read fails with it. When nothing is due, the log is sound and the queue
   * open, it reads at once; otherwise it runs as any operation, the due deadlines first.
   */
  protected async read<T>(fn: () => T): Promise<T> {
    const out = this.closed || this.log.failure || this.table.hasDue(this.now()) ? await this.run(fn) : fn();
    if (this.appliedSeq > 0) await this.log.sync(this.appliedSeq);
    return out;
  }

  protected begin(): Effects {
    if (this.closed) throw new GpufleetError('INTERNAL', 'the job queue is closed');
    this.log.assertWritable();
    const fx = newEffects();
    const now = this.now();
    for (let d = this.table.nextDue(now); d; d = this.table.nextDue(now)) {
      const { kind, job } = d;
      if (kind === 'ttl') {
        const error = `the job's ttl of ${job.policy.ttl} ms ended before a worker took it`;
        this.commit({ t: 'fin', id: job.id, at: now, status: 'TIMED_OUT', error, expired: true }, fx);
      } else if (kind === 'lease') {
        this.lose(job, `its lease expired (no heartbeat for ${this.settings.leaseMs} ms)`, now, fx, true);
      } else {
        const error = `execution timeout of ${job.policy.executionTimeout} ms exceeded`;
        this.commit({ t: 'fin', id: job.id, at: now, status: 'TIMED_OUT', error }, fx);
        fx.stops.push({ workerId: job.workerId!, jobId: job.id });
        fx.recycles.push({ workerId: job.workerId!, jobId: job.id, reason: 'execution-timeout' });
      }
    }
    return fx;
  }

  protected commit(rec: LogRecord, fx: Effects): Job | undefined {
    const job = this.table.apply(rec);
    fx.seq = this.appliedSeq = this.log.append(rec);
    if (job && rec.t === 'fin' && isFinal(job.status)) fx.finals.push(job);
    if (job && rec.t === 'chunk') fx.chunks.add(job.id);
    if (job && job.status === 'IN_QUEUE') fx.ready.add(job.endpointId);
    return job;
  }

  /** an attempt whose worker is gone: back to the queue under the cap, else FAILED */
  protected lose(job: Job, reason: string, now: number, fx: Effects, tellWorker: boolean): Job | undefined {
    const worker = job.workerId!;
    if (tellWorker) fx.stops.push({ workerId: worker, jobId: job.id });
    if (job.autoRetries < this.settings.maxLostRetries) {
      return this.commit({ t: 'rq', id: job.id, at: now, cause: 'lost', error: `worker ${worker}: ${reason}` }, fx);
    }
    const error = `worker ${worker}: ${reason}; not retried again after ${job.autoRetries} automatic retries`;
    return this.commit({ t: 'fin', id: job.id, at: now, status: 'FAILED', error }, fx);
  }

  protected takeNow(endpointId: string, workerId: string, max: number, fx: Effects): Job[] {
    const at = this.now();
    return this.table.nextQueued(endpointId, max).map((id) => this.commit({ t: 'take', id, worker: workerId, at }, fx)!);
  }

  /** the taken jobs once their take is durable; released again if the taker went away meanwhile */
  protected async deliver(jobs: Job[], seq: number, signal: AbortSignal | undefined): Promise<Job[]> {
    await this.log.sync(seq);
    if (!signal?.aborted) return jobs;
    const fx = this.begin();
    for (const taken of jobs) {
      const job = this.table.jobs.get(taken.id);
      if (job?.status === 'IN_PROGRESS' && job.workerId === taken.workerId && job.startedAt === taken.startedAt) {
        this.commit({ t: 'rq', id: job.id, at: this.now(), cause: 'undelivered' }, fx);
      }
    }
    await this.finish(fx);
    return [];
  }

  protected async finish(fx: Effects): Promise<void> {
    for (const endpointId of fx.ready) this.dispatch(endpointId);
    if (fx.seq > 0) await this.log.sync(fx.seq);
    this.publish(fx);
    if (!this.compacting && this.log.bytesSinceCompaction > Math.max(this.settings.compactAfterBytes, 2 * this.lastSnapshotBytes)) {
      // the log keeps every record until a compaction succeeds; the next change tries again
      this.compact().catch((e: unknown) => this.onError(asQueueError(e, 'The job queue could not compact its log; it keeps every record and tries again')));
    }
  }

  /**
   * After a failed log write: the records it dropped were applied in memory already, so the state is
   * rebuilt from the log as it is on disk (cut back to its last durable record), as a restart would.
   * Operations wait for it; parked takers are offered what is queued. One recovery at a time.
   */
  protected recover(): Promise<void> {
    this.recovering ??= (async () => {
      await this.compacting?.catch(() => undefined);
      if (!this.log.failure) return;
      const table = new JobTable({ leaseMs: this.settings.leaseMs, retention: this.settings.retention });
      try {
        await this.log.recover((rec) => table.apply(rec));
      } catch (e) {
        const err = asQueueError(e, 'The job queue could not recover its log after a failed write; the next change tries again');
        this.onError(err);
        throw err;
      }
      // running jobs keep running: their workers were never told otherwise
      table.extendLeases(this.now() + this.settings.leaseMs);
      this.table = table;
      this.appliedSeq = 0; // the rebuilt table holds only what is durable
    })().finally(() => {
      this.recovering = null;
    });
    return this.recovering.then(() => {
      if (this.closed) return;
      // jobs given to takers in the refused writes are queued again: the takers still parked get them
      const fx = newEffects();
      for (const endpointId of this.takeWaiters.keys()) fx.ready.add(endpointId);
      for (const endpointId of fx.ready) this.dispatch(endpointId);
    });
  }

  /** hands queued jobs of the endpoint to the workers waiting in take, oldest waiter first */
  private dispatch(endpointId: string): void {
    for (let w = this.takeWaiters.first(endpointId); w; w = this.takeWaiters.first(endpointId)) {
      const fx = newEffects();
      const jobs = this.takeNow(endpointId, w.workerId, w.max, fx);
      if (jobs.length === 0) return;
      this.takeWaiters.delete(endpointId, w);
      w.settle(this.deliver(jobs, fx.seq, w.signal));
    }
  }

  private publish(fx: Effects): void {
    for (const id of fx.chunks) for (const w of this.streamWaiters.drain(id)) w();
    for (const job of fx.finals) {
      for (const w of this.finalWaiters.drain(job.id)) w(job);
      for (const w of this.streamWaiters.drain(job.id)) w();
      for (const l of this.finalListeners) guard(() => l(job));
    }
    for (const s of fx.stops) this.stops.request(s.workerId, s.jobId);
    for (const e of fx.recycles) for (const l of this.recycleListeners) guard(() => l(e));
  }

  private async runCompaction(): Promise<void> {
    if (this.log.failure) return; // recovery comes first; the next change starts another compaction
    // every record up to the rotation must be durable before the snapshot that holds it replaces them
    const upto = this.log.lastSeq;
    const gen = this.log.rotate();
    const now = this.now();
    // captured synchronously: records are immutable and streams only grow, so the snapshot is the
    // state at the rotation, and every later record is in the new generation
    const puts: LogRecord[] = [];
    const seen = new Set<string>();
    const put = (id: string): void => {
      const job = this.table.find(id, now);
      if (!job || seen.has(id)) return;
      seen.add(id);
      puts.push({ t: 'put', job, stream: [...(this.table.streams.get(id) ?? [])] });
    };
    for (const l of this.table.lanes.values()) for (const lane of [l.retry, l.normal, l.low]) for (const id of lane) put(id);
    for (const id of this.table.jobs.keys()) put(id);
    // webhook deliveries still pending, with their jobs (which may be past retention)
    for (const p of this.table.webhooks.values()) puts.push({ t: 'whp', job: p.job, attempts: p.attempts, nextAt: p.nextAt });
    this.lastSnapshotBytes = await this.log.writeSnapshot(gen, puts, this.log.sync(upto));
    await this.log.dropBefore(gen);
  }

  protected async shutdown(): Promise<void> {
    this.closed = true;
    await this.compacting?.catch(() => undefined);
    for (const w of this.takeWaiters.drainAll()) w.settle([]);
    for (const w of this.finalWaiters.drainAll()) w(undefined);
    for (const w of this.streamWaiters.drainAll()) w();
    this.stops.close();
    await this.log.close();
  }

  protected waitOpts(opts: WaitOptions | undefined): WaitOptions {
    return { waitMs: opts?.waitMs ?? 0, signal: opts?.signal };
  }
}

/** a failure as the registry's error (a GpufleetError passes as it is) */
export function asQueueError(e: unknown, what: string): GpufleetError {
  if (e instanceof GpufleetError) return e;
  return new GpufleetError('JOB_QUEUE_UNAVAILABLE', `${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // a listener's failure is its own; the queue's state is already durable
  }
}
