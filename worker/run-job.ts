// Runs one job through the handler and turns what it returns, yields or throws into the job-done body
// runpod-python would send (rp_job.run_job / run_job_generator / handle_job).
import { SDK_VERSION } from './config.ts';
import type { JobDoneBody } from './protocol-client.ts';
import type { Handler, Job, JobContext } from './types.ts';

/** The platform stopped the job (job-stop) or the worker gave it up; nothing is reported for it. */
export class JobStoppedError extends Error {
  override readonly name = 'JobStoppedError';
  constructor(readonly jobId: string) {
    super(`job ${jobId} was stopped`);
  }
}

export interface JobOutcome {
  body: JobDoneBody;
  /** the handler streamed (its final result goes to job-done with `isStream=true`) */
  isStream: boolean;
}

export interface RunJobDeps {
  /** posts one streamed item (job-stream); failures are the caller's to log, never the job's */
  emitStream(item: unknown): Promise<void>;
  returnAggregateStream: boolean;
  /** for the error payload */
  hostname: string;
  workerId: string;
}

/**
 * Runs `handler` for `job`. Resolves with the body to post; rejects only with JobStoppedError when
 * `context.signal` aborts first (the handler's own errors become the error payload).
 */
export async function runJob<I>(job: Job<I>, handler: Handler<I>, context: JobContext, deps: RunJobDeps): Promise<JobOutcome> {
  let returned: unknown;
  try {
    returned = handler(job, context);
  } catch (err) {
    return { body: { error: errorPayload(err, deps) }, isStream: false };
  }
  const iterator = streamIterator(returned);
  if (iterator) return streamJob(job, iterator, context.signal, deps);
  try {
    return { body: resultBody(await untilStopped(Promise.resolve(returned), context.signal, job.id)), isStream: false };
  } catch (err) {
    if (err instanceof JobStoppedError) throw err;
    return { body: { error: errorPayload(err, deps) }, isStream: false };
  }
}

async function streamJob(job: Job<unknown>, it: Iterator<unknown> | AsyncIterator<unknown>, signal: AbortSignal, deps: RunJobDeps): Promise<JobOutcome> {
  const aggregate: unknown[] = [];
  try {
    for (;;) {
      const step = await untilStopped(Promise.resolve(it.next()), signal, job.id);
      if (step.done) break;
      const item: unknown = step.value === undefined ? null : step.value;
      // a yielded {error: ...} ends the stream and fails the job, as in runpod-python
      if (isPlainObject(item) && item.error) {
        void Promise.resolve(it.return?.()).catch(() => undefined);
        return { body: { error: String(item.error) }, isStream: true };
      }
      if (deps.returnAggregateStream) aggregate.push(item);
      await deps.emitStream(item);
    }
  } catch (err) {
    if (err instanceof JobStoppedError) {
      void Promise.resolve(it.return?.()).catch(() => undefined);
      throw err;
    }
    return { body: { error: errorPayload(err, deps) }, isStream: true };
  }
  return { body: { output: aggregate }, isStream: true };
}

/** A handler's plain return value → `{output}`, popping `error` and `refresh_worker` from objects. */
export function resultBody(value: unknown): JobDoneBody {
  if (!isPlainObject(value)) return { output: value === undefined ? null : value };
  const { error, refresh_worker: refresh, ...rest } = value;
  const body: JobDoneBody = {};
  if (Object.keys(rest).length > 0) body.output = rest; // runpod-python drops an output of {}
  if (error) body.error = error;
  if (refresh) body.stopPod = true;
  return body;
}

/** The protocol's error string: JSON of {error_type, error_message, error_traceback, hostname, ...}. */
export function errorPayload(err: unknown, who: { hostname: string; workerId: string }): string {
  const e = err instanceof Error ? err : null;
  return JSON.stringify({
    error_type: e ? e.name : typeof err,
    error_message: e ? e.message : String(err),
    error_traceback: e?.stack ?? '',
    hostname: who.hostname,
    worker_id: who.workerId,
    runpod_version: SDK_VERSION,
  });
}

/** An async iterable or a generator object means streaming; arrays and other iterables are values. */
function streamIterator(value: unknown): Iterator<unknown> | AsyncIterator<unknown> | null {
  if (typeof value !== 'object' || value === null) return null;
  const asyncIt = (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
  if (typeof asyncIt === 'function') return asyncIt.call(value);
  if (Object.prototype.toString.call(value) === '[object Generator]') return value as Generator<unknown>;
  return null;
}

function untilStopped<T>(p: Promise<T>, signal: AbortSignal, jobId: string): Promise<T> {
  if (signal.aborted) return Promise.reject(new JobStoppedError(jobId));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new JobStoppedError(jobId));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
