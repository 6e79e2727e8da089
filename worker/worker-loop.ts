// The worker's loops, as runpod-python's JobScaler runs them: take jobs while slots are free (long
// poll), run them concurrently, watch the job-stop channel, and ping with the in-progress job ids.
// stop() ends the take loop at once and drains: in-flight jobs finish and are reported first.
import type { WorkerConfig } from './config.ts';
import { describeError } from './logger.ts';
import { registerProgressSender } from './progress.ts';
import { ProtocolClient, type JobDoneBody } from './protocol-client.ts';
import { JobStoppedError, runJob } from './run-job.ts';
import type { Job, WorkerLogger, WorkerOptions } from './types.ts';

interface InFlight {
  job: Job<unknown>;
  controller: AbortController;
  /** progress posts of this job, chained so they arrive in order and before the final result */
  progressChain: Promise<void>;
}

const BACKOFF_429_MS = 5_000;
const ERROR_RETRY_MS = 1_000;
/** floor between empty polls when a server answers at once instead of holding the request */
const EMPTY_POLL_FLOOR_MS = 200;

export class WorkerLoop {
  private readonly client: ProtocolClient;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly takeAbort = new AbortController();
  private readonly channelAbort = new AbortController();
  private readonly concurrency: number;
  private waiters: Array<() => void> = [];
  private stopping = false;
  readonly done: Promise<void>;

  constructor(
    private readonly config: WorkerConfig,
    private readonly options: WorkerOptions<unknown>,
    private readonly log: WorkerLogger,
  ) {
    this.client = new ProtocolClient(config);
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.done = this.run();
  }

  inProgress(): string[] {
    return [...this.inFlight.keys()];
  }

  /** Stop taking jobs; resolves once in-flight jobs have been reported. */
  stop(reason = 'stop requested'): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.log.info(`stopping (${reason}); draining ${this.inFlight.size} job(s)`);
      this.takeAbort.abort();
      this.notify();
    }
    return this.done;
  }

  private async run(): Promise<void> {
    this.log.info(`worker ${this.config.workerId} started (concurrency ${this.concurrency})`);
    const stopTimer = this.startPings();
    const stopChannel = this.stopChannelLoop();
    await this.takeLoop();
    while (this.inFlight.size > 0) await this.changed();
    this.channelAbort.abort();
    stopTimer();
    await stopChannel;
    this.log.info('worker stopped');
  }

  private async takeLoop(): Promise<void> {
    while (!this.stopping) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0) {
        await this.changed();
        continue;
      }
      const started = Date.now();
      try {
        const res = await this.client.take(free, this.inFlight.size > 0, this.takeAbort.signal);
        if (res.kind === 'backoff') await this.sleep(BACKOFF_429_MS, this.takeAbort.signal);
        else if (res.kind === 'none') await this.sleep(EMPTY_POLL_FLOOR_MS - (Date.now() - started), this.takeAbort.signal);
        else for (const job of res.jobs) this.startJob(job);
      } catch (err) {
        if (this.stopping) break;
        if (err instanceof Error && err.name === 'TimeoutError') continue; // long poll ran out; poll again
        this.log.error(`job-take failed: ${describeError(err)}`);
        await this.sleep(ERROR_RETRY_MS, this.takeAbort.signal);
      }
    }
  }

  private startJob(job: Job<unknown>): void {
    if (this.inFlight.has(job.id)) return; // the same job handed out twice: run it once
    const entry: InFlight = { job, controller: new AbortController(), progressChain: Promise.resolve() };
    this.inFlight.set(job.id, entry);
    const unregister = registerProgressSender(job.id, (v) => this.sendProgress(entry, v));
    this.log.info(`job ${job.id} started`);
    void this.execute(entry).finally(() => {
      unregister();
      this.inFlight.delete(job.id);
      this.notify();
    });
  }

  private async execute(entry: InFlight): Promise<void> {
    const { job, controller } = entry;
    const refresh = this.options.refreshWorker === true;
    try {
      const outcome = await runJob(job, this.options.handler, {
        signal: controller.signal,
        progress: (v) => this.sendProgress(entry, v),
      }, {
        emitStream: (item) => this.client.postStream(job.id, item).catch((err: unknown) => {
          this.log.error(`job ${job.id}: job-stream failed: ${describeError(err)}`);
        }),
        returnAggregateStream: this.options.returnAggregateStream === true,
        hostname: this.config.hostname,
        workerId: this.config.podIdForErrors,
      });
      const body: JobDoneBody = refresh ? { ...outcome.body, stopPod: true } : outcome.body;
      await entry.progressChain;
      if (controller.signal.aborted) throw new JobStoppedError(job.id);
      await this.client.postDone(job.id, body, outcome.isStream).catch((err: unknown) => {
        this.log.error(`job ${job.id}: job-done failed: ${describeError(err)}`);
      });
      this.log.info(`job ${job.id} finished${body.error === undefined ? '' : ' with an error'}`);
    } catch (err) {
      if (err instanceof JobStoppedError) this.log.info(`job ${job.id} stopped by the platform`);
      else this.log.error(`job ${job.id}: ${describeError(err)}`);
    }
    // refresh_worker in the config ends this worker after the job (rp_scale.handle_job)
    if (refresh) void this.stop('refresh_worker');
  }

  private sendProgress(entry: InFlight, value: unknown): Promise<void> {
    if (this.inFlight.get(entry.job.id) !== entry || entry.controller.signal.aborted) return Promise.resolve();
    const post = (): Promise<void> =>
      this.client.postDone(entry.job.id, { status: 'IN_PROGRESS', output: value }, false).catch((err: unknown) => {
        this.log.error(`job ${entry.job.id}: progress update failed: ${describeError(err)}`);
      });
    entry.progressChain = entry.progressChain.then(post);
    return entry.progressChain;
  }

  private async stopChannelLoop(): Promise<void> {
    if (!this.config.jobStopUrl) {
      this.log.info('job-take URL has no /job-take/ segment; the job-stop channel is off');
      return;
    }
    const signal = this.channelAbort.signal;
    while (!signal.aborted) {
      try {
        const res = await this.client.pollStop(signal);
        if (res.kind === 'stop') {
          for (const id of res.jobIds) this.inFlight.get(id)?.controller.abort();
        } else {
          await this.sleep(res.kind === 'backoff' ? BACKOFF_429_MS : ERROR_RETRY_MS, signal);
        }
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof Error && err.name === 'TimeoutError') continue;
        this.log.error(`job-stop failed: ${describeError(err)}`);
        await this.sleep(ERROR_RETRY_MS, signal);
      }
    }
  }

  private startPings(): () => void {
    if (!this.config.pingUrl) return () => undefined;
    const tick = (): void => {
      this.client.ping(this.inProgress()).catch((err: unknown) => this.log.error(`ping failed: ${describeError(err)}`));
    };
    tick();
    const timer = setInterval(tick, this.config.pingIntervalMs);
    return () => clearInterval(timer);
  }

  /** resolves at the next job start/finish or stop() */
  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
