// The worker side of the platform's worker protocol (runpod-compat.md 3.2), one method per call, with
// the headers and quirks of runpod-python so a server that works with one works with the other.
import { jobUrl, SDK_VERSION, type WorkerConfig } from './config.ts';
import { httpCall, type HttpAnswer } from './http-call.ts';
import type { Job } from './types.ts';

/** Client timeout of the job-take and job-stop long polls (runpod-python `jobs_fetcher_timeout`). */
export const LONG_POLL_TIMEOUT_MS = 90_000;
/** Client timeout of one job-done or job-stream post. */
const POST_TIMEOUT_MS = 600_000;

export type TakeResult =
  | { kind: 'jobs'; jobs: Job[] }
  | { kind: 'none' } // 204, 400, or a body that is not a JSON job
  | { kind: 'backoff' }; // 429

export type StopResult = { kind: 'stop'; jobIds: string[] } | { kind: 'none' } | { kind: 'backoff' };

/** Body of a job-done POST; `status: 'IN_PROGRESS'` marks a progress update, anything else is final. */
export interface JobDoneBody {
  output?: unknown;
  /** a thrown error gives the JSON string of errorPayload(); a returned `{error}` passes through as is */
  error?: unknown;
  stopPod?: true;
  status?: 'IN_PROGRESS';
}

/** A protocol call answered with an unexpected HTTP status. */
export class ProtocolHttpError extends Error {
  override readonly name = 'ProtocolHttpError';
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`${url} answered HTTP ${status}`);
  }
}

export class ProtocolClient {
  constructor(private readonly config: WorkerConfig) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      Authorization: this.config.apiKey, // raw key, no "Bearer", as runpod-python sends it
      'Content-Type': 'application/json',
      'User-Agent': SDK_VERSION,
      ...extra,
    };
  }

  /** job-take (`batchSize` 1) or job-take-batch; long-polled, aborted by `signal` or after 90 s. */
  async take(batchSize: number, jobInProgress: boolean, signal: AbortSignal): Promise<TakeResult> {
    let url = this.config.jobTakeUrl;
    if (batchSize > 1) url = url.replace('/job-take/', '/job-take-batch/') + `&batch_size=${batchSize}`;
    url += `&job_in_progress=${jobInProgress ? '1' : '0'}`;
    const res = await httpCall(url, { method: 'GET', headers: this.headers(), timeoutMs: LONG_POLL_TIMEOUT_MS, signal });
    if (res.status === 204 || res.status === 400) return { kind: 'none' };
    if (res.status === 429) return { kind: 'backoff' };
    if (!ok(res)) throw new ProtocolHttpError(url, res.status);
    const body = jsonOf(res);
    if (Array.isArray(body)) return { kind: 'jobs', jobs: body.filter(isJob) };
    if (body === undefined || body === null || typeof body !== 'object') return { kind: 'none' };
    if (!isJob(body)) throw new Error('Job has missing field(s): id or input.');
    return { kind: 'jobs', jobs: [body] };
  }

  /** job-stop long poll: the ids of in-flight jobs the platform wants stopped. */
  async pollStop(signal: AbortSignal): Promise<StopResult> {
    const url = this.config.jobStopUrl;
    if (!url) return { kind: 'none' };
    const res = await httpCall(url, { method: 'GET', headers: this.headers(), timeoutMs: LONG_POLL_TIMEOUT_MS, signal });
    if (res.status === 204) return { kind: 'none' };
    if (res.status === 429) return { kind: 'backoff' };
    if (!ok(res)) throw new ProtocolHttpError(url, res.status);
    const body = jsonOf(res);
    if (!body || typeof body !== 'object' || Array.isArray(body)) return { kind: 'none' };
    const raw = (body as { jobsToStop?: unknown }).jobsToStop;
    const ids = Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : [];
    return ids.length ? { kind: 'stop', jobIds: ids } : { kind: 'none' };
  }

  /** job-done: final result or progress (`status: 'IN_PROGRESS'`); 3 attempts as runpod-python. */
  postDone(jobId: string, body: JobDoneBody, isStream: boolean): Promise<void> {
    return this.post(jobUrl(this.config.jobDoneTemplate, jobId, isStream), jobId, body);
  }

  /** job-stream: one streamed item, `{"output": item}`. */
  postStream(jobId: string, item: unknown): Promise<void> {
    return this.post(jobUrl(this.config.jobStreamTemplate, jobId, false), jobId, { output: item });
  }

  /** Heartbeat with the in-progress job ids; the response is ignored (as runpod-python). */
  async ping(jobIds: string[]): Promise<void> {
    if (!this.config.pingUrl) return;
    const url = new URL(this.config.pingUrl);
    if (jobIds.length) url.searchParams.set('job_id', jobIds.join(','));
    url.searchParams.set('runpod_version', SDK_VERSION);
    await httpCall(url.href, { method: 'GET', headers: { Authorization: this.config.apiKey, 'User-Agent': SDK_VERSION }, timeoutMs: this.config.pingIntervalMs * 2 });
  }

  private async post(url: string, jobId: string, body: unknown): Promise<void> {
    // runpod-python sends JSON labelled as a form (and a stray `charset` header); servers must parse
    // the raw body as JSON whatever the content-type says, so send the same to keep them honest
    const data = JSON.stringify(body);
    const headers = this.headers({
      'Content-Type': 'application/x-www-form-urlencoded',
      charset: 'utf-8',
      'X-Request-ID': jobId,
    });
    const delays = [100, 200]; // FibonacciRetry(attempts=3)
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await httpCall(url, { method: 'POST', headers, body: data, timeoutMs: POST_TIMEOUT_MS });
        if (ok(res)) return;
        throw new ProtocolHttpError(url, res.status);
      } catch (err) {
        const delay = delays[attempt];
        if (delay === undefined) throw err;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}

const ok = (res: HttpAnswer): boolean => res.status >= 200 && res.status < 300;

/** The JSON body, or undefined when the content-type is not JSON or the body is empty / invalid. */
function jsonOf(res: HttpAnswer): unknown {
  if (!res.contentType.toLowerCase().startsWith('application/json') || res.body.length === 0) return undefined;
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    return undefined;
  }
}

function isJob(x: unknown): x is Job {
  return typeof x === 'object' && x !== null && typeof (x as { id?: unknown }).id === 'string' && 'input' in x;
}
