// Public types of the worker SDK. A job is the JSON object the platform hands out on job-take, passed
// to the handler as received (extra keys such as `webhook` or `batchId` included), as runpod-python does.

/** One job as received from job-take: `id` and `input` are always present. */
export interface Job<I = unknown> {
  id: string;
  input: I;
  webhook?: string;
  batchId?: string;
  /** the bucket the job's submitter gave (`s3Config` of run/runsync), for the handler's uploads */
  s3Config?: { accessId: string; accessSecret: string; bucketName: string; endpointUrl: string; objectPath?: string };
  [key: string]: unknown;
}

/** What a handler gets besides the job. */
export interface JobContext {
  /**
   * Aborted when the platform stops this job (job-stop channel, e.g. cancel or execution timeout).
   * JavaScript cannot interrupt a running function: the SDK stops waiting for the handler at once and
   * posts nothing for the job, but the handler's own work only ends if it honours this signal.
   */
  readonly signal: AbortSignal;
  /** Same as `progressUpdate(job, value)`. */
  progress(value: unknown): Promise<void>;
}

/**
 * A handler returns a JSON-serialisable value or a promise of one (one result), or an async iterable /
 * generator (streaming: each item is posted to job-stream). A thrown error becomes the error payload.
 * A returned plain object may carry `error` (reported as the job's error, the rest as output) and
 * `refresh_worker: true` (asks the platform to recycle this worker), as in runpod-python.
 */
export type Handler<I = unknown> = (job: Job<I>, context: JobContext) => unknown;

export interface WorkerLogger {
  debug(message: string): void;
  info(message: string): void;
  error(message: string): void;
}

export interface WorkerOptions<I = unknown> {
  handler: Handler<I>;
  /** jobs run at once; with more than one free slot, jobs are taken through job-take-batch. Default 1 */
  concurrency?: number;
  /** after each job, report `stopPod: true` and stop this worker (drain, then `done` resolves). */
  refreshWorker?: boolean;
  /** a streaming job's final result carries every streamed item (`{"output":[...]}`), not `[]` */
  returnAggregateStream?: boolean;
  /** SIGTERM / SIGINT drain in-flight jobs, then exit the process with 0. Default true */
  handleSignals?: boolean;
  /** where the RUNPOD_* variables are read from. Default process.env */
  env?: Record<string, string | undefined>;
  /** default: lines on stderr; debug lines only with RUNPOD_LOG_LEVEL / RUNPOD_DEBUG_LEVEL=DEBUG */
  logger?: WorkerLogger;
}

export interface WorkerHandle {
  /** RUNPOD_POD_ID, or a random UUID when unset (as runpod-python) */
  readonly workerId: string;
  /** resolves once the worker has stopped taking jobs and every in-flight job has been reported */
  readonly done: Promise<void>;
  /** stop taking jobs, let in-flight jobs finish and report, then resolve (same promise as `done`) */
  stop(): Promise<void>;
  /** ids of the jobs in progress on this worker */
  inProgress(): string[];
}
