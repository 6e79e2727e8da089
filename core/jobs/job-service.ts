// The job interface as its users see it (`/v2/{endpointId}/run`, `runsync`, `status`, …; runpod-
// compat.md 2.1), over the JobQueue: which endpoint and job the caller may touch (their own QUEUE
// endpoints; anything else is 404), the body's rules, credits, webhooks, and the shapes answered.
// Every duration is in milliseconds. docs/jobs.md, "The job interface".
import { check, compile, GpufleetError, isGpufleetError, jobRunSchema, type EndpointRecord, type JobRunInput } from '../../model/index.ts';
import type { SecretBox, Store } from '../../store/index.ts';
import type { AccountCredits } from '../billing/index.ts';
import type { WorkerStateCounts } from './worker-ports.ts';
import { isFinal, JOB_LIMITS, type EnqueueRequest, type Job, type JobHistoryPage, type JobStatus } from '../../model/index.ts';
import { holdMicros } from '../billing/index.ts';
import { sealS3Config } from './job-s3-config.ts';
import type { EndpointCounts, JobQueue } from './job-queue.ts';
import { checkWebhookUrl, WebhookSender, type WebhookDelivery } from './webhook.ts';
import { jobHistoryPage, parseJobHistoryQuery } from './job-history.ts';
import type { WorkerPorts } from './worker-ports.ts';
import type { Principal } from '../../model/index.ts';

const validateRun = compile<JobRunInput>(jobRunSchema);

/** `?wait` of runsync and status-sync (ms): the public platform's range and default */
export const JOB_WAIT = { min: 1000, max: 300_000, default: 90_000 } as const;
/** how long a stream poll that finds nothing new holds (ms); under runpod-python's 10 s request timeout */
export const STREAM_HOLD_MS = 5000;

/** A job as the job interface answers it (status, runsync, cancel, retry, and the webhook body). */
export interface JobView {
  id: string;
  /** THROTTLED: shown for a queued job whose endpoint can have no worker (`reason` says why); stored as IN_QUEUE */
  status: JobStatus | 'THROTTLED';
  reason?: string;
  /** ms from entering the queue to the take of the attempt that reported */
  delayTime?: number;
  /** ms from that take to the final status */
  executionTime?: number;
  output?: unknown;
  error?: string;
  workerId?: string;
  /** times the job went back to the queue (worker lost, retry) */
  retries?: number;
}

export function toJobView(job: Job): JobView {
  const v: JobView = { id: job.id, status: job.status };
  if (job.delayTime !== undefined) v.delayTime = job.delayTime;
  if (job.executionTime !== undefined) v.executionTime = job.executionTime;
  if (job.output !== undefined) v.output = job.output;
  if (job.error !== undefined) v.error = job.error;
  if (job.workerId !== undefined) v.workerId = job.workerId;
  if (job.retries > 0) v.retries = job.retries;
  return v;
}

export interface StreamView {
  id: string;
  status: JobStatus;
  /** only the chunks no earlier poll returned; empty once a final job has given everything */
  stream: { output: unknown }[];
}

export interface HealthView {
  jobs: EndpointCounts;
  workers: WorkerStateCounts;
}

export interface JobServiceOptions {
  /** seals a job's s3Config secret while the queue keeps it; without one, s3Config is refused */
  secretBox?: SecretBox;
  /** GPUFLEET_WEBHOOK_ALLOW_PRIVATE: webhooks may call private and loopback addresses */
  webhookAllowPrivate?: boolean;
  webhookRetryDelayMs?: number;
  onWebhookDelivery?: (d: WebhookDelivery) => void;
  streamHoldMs?: number;
}

/** a `?wait=` value: an integer number of ms in JOB_WAIT's range, else 400 (the public platform's answer) */
export function parseWait(raw: unknown): number {
  if (raw === undefined) return JOB_WAIT.default;
  const n = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= JOB_WAIT.min && n <= JOB_WAIT.max))
    throw new GpufleetError('BAD_REQUEST', `wait is invalid; must be between ${JOB_WAIT.min} and ${JOB_WAIT.max}`, {
      errors: [`$.wait: must be an integer number of milliseconds from ${JOB_WAIT.min} to ${JOB_WAIT.max}`],
    });
  return n;
}

/** a `?ttl=` value on status (ms), or undefined when absent; out of range is 400 */
export function parseStatusTtl(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const { min, max } = JOB_LIMITS.statusTtl;
  const n = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new GpufleetError('BAD_REQUEST', `ttl is invalid; must be between ${min} and ${max}`, {
      errors: [`$.ttl: must be an integer number of milliseconds from ${min} to ${max}`],
    });
  return n;
}

export class JobService {
  readonly webhooks: WebhookSender;
  private readonly allowPrivate: boolean;
  private readonly streamHoldMs: number;
  private readonly secretBox: SecretBox | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly queue: JobQueue,
    private readonly store: Store,
    private readonly credits: AccountCredits,
    private readonly workers: WorkerPorts,
    opts: JobServiceOptions = {},
  ) {
    this.allowPrivate = opts.webhookAllowPrivate ?? false;
    this.streamHoldMs = opts.streamHoldMs ?? STREAM_HOLD_MS;
    this.secretBox = opts.secretBox;
    this.webhooks = new WebhookSender({
      allowPrivate: this.allowPrivate,
      ...(opts.webhookRetryDelayMs !== undefined ? { retryDelayMs: opts.webhookRetryDelayMs } : {}),
      ...(opts.onWebhookDelivery ? { onDelivery: opts.onWebhookDelivery } : {}),
    });
    this.unsubscribe = queue.onFinal((job) => {
      if (job.webhook !== undefined) this.webhooks.send(job.webhook, job.id, toJobView(job));
    });
    // deliveries are kept in the queue's log: those pending before a restart go on (webhook.ts)
    void this.webhooks.resume(queue, toJobView).catch(() => undefined);
  }

  /** `run` (sync false) and `runsync` (sync true, waiting up to `waitMs` for a final status) */
  async run(principal: Principal, endpointId: string, body: unknown, opts: { sync: boolean; waitMs?: number; signal?: AbortSignal }): Promise<JobView> {
    const endpoint = await this.endpoint(principal, endpointId, { slug: true });
    const input = check(validateRun, body, 'job request');
    const webhook = webhookOf(input);
    if (input.s3Config !== undefined && !this.secretBox)
      throw new GpufleetError('BAD_REQUEST', 's3Config is not offered by this control plane (it has no key to seal the secret with).', { errors: ['$.s3Config: not offered here'] });
    if (webhook !== undefined) await checkWebhookUrl(webhook.url, this.allowPrivate).catch((e: unknown) => Promise.reject(atPath(e, webhook.path)));
    const holdId = await this.holdOrCheck(principal, endpoint);
    const job = await this.enqueueHeld(holdId, {
      endpointId: endpoint.id,
      accountId: principal.accountId,
      input: input.input,
      ...(webhook !== undefined ? { webhook: webhook.url } : {}),
      ...(input.s3Config !== undefined && this.secretBox ? { s3Config: sealS3Config(this.secretBox, endpoint.id, input.s3Config) } : {}),
      policy: {
        // the endpoint's executionTimeout unless the job names one (within the queue's limits)
        executionTimeout: input.policy?.executionTimeout ?? Math.max(JOB_LIMITS.executionTimeout.min, Math.min(JOB_LIMITS.executionTimeout.max, endpoint.executionTimeoutMs)),
        ...(input.policy?.ttl !== undefined ? { ttl: input.policy.ttl } : {}),
        ...(input.policy?.lowPriority !== undefined ? { lowPriority: input.policy.lowPriority } : {}),
      },
      sync: opts.sync,
    });
    this.workers.notifyQueued(endpoint.id);
    if (!opts.sync) return this.throttledView({ id: job.id, status: job.status }, endpoint.id);
    // no worker can start (no enrolled host has its GPU types): waiting out `wait` cannot help
    const noWorker = job.status === 'IN_QUEUE' ? await this.workers.noWorkerReason(endpoint.id) : null;
    if (noWorker) return { id: job.id, status: 'THROTTLED', reason: noWorker };
    const done = await this.queue.waitForFinal(job.id, { waitMs: opts.waitMs ?? JOB_WAIT.default, ...(opts.signal ? { signal: opts.signal } : {}) });
    return done ? toJobView(done) : this.throttledView({ id: job.id, status: job.status }, endpoint.id);
  }

  async status(principal: Principal, endpointId: string, jobId: string, ttlMs?: number): Promise<JobView> {
    const job = await this.job(principal, endpointId, jobId);
    return this.throttledView(toJobView(ttlMs === undefined ? job : await this.queue.setTtl(job.id, ttlMs)), job.endpointId);
  }

  /**
   * A queued job of an endpoint that can have no worker (docs/serverless.md#gpu-types-no-host-has) is
   * shown THROTTLED with the reason; it stays queued and runs once a host with its GPU type is enrolled.
   */
  private async throttledView(v: JobView, endpointId: string): Promise<JobView> {
    if (v.status !== 'IN_QUEUE') return v;
    const reason = await this.workers.noWorkerReason(endpointId);
    return reason ? { ...v, status: 'THROTTLED', reason } : v;
  }

  /** status-sync: the job once final, or as it stands when `waitMs` ends */
  async statusSync(principal: Principal, endpointId: string, jobId: string, waitMs: number, signal?: AbortSignal): Promise<JobView> {
    const job = await this.job(principal, endpointId, jobId);
    if (isFinal(job.status)) return toJobView(job);
    const now = await this.queue.waitForFinal(job.id, { waitMs, ...(signal ? { signal } : {}) });
    if (!now) throw notFound(jobId);
    return toJobView(now);
  }

  /** the chunks no earlier poll returned; holds a little while when there is nothing new yet */
  async stream(principal: Principal, endpointId: string, jobId: string, signal?: AbortSignal): Promise<StreamView> {
    await this.job(principal, endpointId, jobId);
    const read = await this.queue.readStream(jobId, undefined, { waitMs: this.streamHoldMs, ...(signal ? { signal } : {}) });
    if (!read) throw notFound(jobId);
    return { id: jobId, status: read.status, stream: read.chunks.map((output) => ({ output })) };
  }

  async cancel(principal: Principal, endpointId: string, jobId: string): Promise<JobView> {
    await this.job(principal, endpointId, jobId);
    return toJobView(await this.queue.cancel(jobId));
  }

  /** FAILED and TIMED_OUT jobs only; the same id goes back to the queue */
  async retry(principal: Principal, endpointId: string, jobId: string): Promise<JobView> {
    const prev = await this.job(principal, endpointId, jobId);
    const endpoint = await this.endpoint(principal, endpointId, { slug: true });
    const holdId = await this.holdOrCheck(principal, endpoint, prev.id);
    const job = await this.queue.retry(jobId).catch(async (e: unknown) => {
      if (holdId) await this.credits.release(holdId).catch(() => undefined);
      throw e;
    });
    this.workers.notifyQueued(job.endpointId);
    return { id: job.id, status: job.status };
  }

  async purgeQueue(principal: Principal, endpointId: string): Promise<{ removed: number; status: 'completed' }> {
    const e = await this.endpoint(principal, endpointId);
    return { removed: await this.queue.purge(e.id), status: 'completed' };
  }

  /** the caller's jobs of its own endpoint, newest first, a page at a time (job-history.ts); another account's endpoint is 404 */
  async history(principal: Principal, endpointId: string, query: Record<string, unknown>): Promise<JobHistoryPage> {
    const q = parseJobHistoryQuery(query);
    const e = await this.endpoint(principal, endpointId);
    const jobs = await this.queue.listJobs({
      endpointId: e.id,
      accountId: principal.accountId,
      ...(q.statuses ? { statuses: q.statuses } : {}),
      ...(q.after ? { after: q.after } : {}),
      limit: q.limit + 1,
      bodies: q.include,
    });
    return jobHistoryPage(jobs, q);
  }

  async health(principal: Principal, endpointId: string): Promise<HealthView> {
    const e = await this.endpoint(principal, endpointId);
    const [jobs, workers] = await Promise.all([this.queue.counts(e.id), this.workers.counts(e.id)]);
    return { jobs, workers };
  }

  /**
   * A public model job of another account holds its most possible cost (credit-holds.ts): the hold's
   * id; every other job only needs credits left (402 otherwise). `jobId` when the job exists (retry).
   */
  private async holdOrCheck(principal: Principal, endpoint: EndpointRecord, jobId?: string): Promise<string | null> {
    const entry = endpoint.accountId === principal.accountId ? undefined : (await this.store.list('publicEndpoints', { endpointId: endpoint.id }))[0];
    const amountMicros = entry && holdMicros(entry);
    if (!entry || amountMicros === undefined) {
      await this.credits.assertCanSubmit(principal);
      return null;
    }
    return this.credits.reserve(principal, { entry, amountMicros, ...(jobId !== undefined ? { jobId } : {}) });
  }

  /**
   * Enqueues a job whose hold (if any) is made: a refused enqueue releases the hold; an accepted one
   * names the job on it, and a job already final by then (a quick worker) releases it (its charge,
   * if any, was written with it). A hold left without a job (a crash between) is released by the sweep.
   */
  private async enqueueHeld(holdId: string | null, req: EnqueueRequest): Promise<Job> {
    if (!holdId) return this.queue.enqueue(req);
    const job = await this.queue.enqueue(req).catch(async (e: unknown) => {
      await this.credits.release(holdId).catch(() => undefined);
      throw e;
    });
    const attached = await this.credits.attach(holdId, job.id).catch(() => false);
    if (attached) {
      const now = await this.queue.get(job.id).catch(() => undefined);
      if (!now || isFinal(now.status)) await this.credits.releaseJob(job.id, job.accountId).catch(() => undefined);
    }
    return job;
  }

  close(): void {
    this.unsubscribe();
    this.webhooks.close();
  }

  /**
   * The caller's QUEUE endpoint; another account's (or none) is 404, as for pods. With `slug` (run
   * and the routes of one job), an id that is none of the caller's endpoints may be a public model's
   * slug: the operator's endpoint behind it runs the job, which stays the caller's
   * (docs/public-endpoints.md). purge-queue and health take endpoint ids only.
   */
  private async endpoint(principal: Principal, endpointId: string, opts: { slug?: boolean } = {}): Promise<EndpointRecord> {
    const own = await this.store.get('endpoints', endpointId);
    const e = own && own.accountId === principal.accountId ? own : opts.slug ? await this.publicModel(endpointId) : undefined;
    if (!e) throw new GpufleetError('NOT_FOUND', `Endpoint ${endpointId} was not found.`, { fields: { endpointId } });
    if (e.type !== 'QUEUE')
      throw new GpufleetError('BAD_REQUEST', `Endpoint ${endpointId} is a ${e.type} endpoint; the job interface serves QUEUE endpoints only.`, {
        fields: { endpointId, type: e.type },
      });
    return e;
  }

  /** the endpoint behind a public model's slug, while it is its publisher's */
  private async publicModel(slug: string): Promise<EndpointRecord | undefined> {
    const entry = await this.store.get('publicEndpoints', slug);
    const e = entry ? await this.store.get('endpoints', entry.endpointId) : undefined;
    return e && e.accountId === entry?.accountId ? e : undefined;
  }

  /** a job of the caller's endpoint; an unknown, expired or other endpoint's job is 404 */
  private async job(principal: Principal, endpointId: string, jobId: string): Promise<Job> {
    const e = await this.endpoint(principal, endpointId, { slug: true });
    const job = await this.queue.get(jobId);
    if (!job || job.endpointId !== e.id || job.accountId !== principal.accountId) throw notFound(jobId);
    return job;
  }
}

/**
 * `webhook` or `webhookV2`: the public SDKs type both as a URL and the public documents describe
 * only `webhook`, so `webhookV2` is taken as the same thing (docs/jobs.md). Both, naming different
 * URLs, is 400: one job has one webhook here.
 */
function webhookOf(input: JobRunInput): { url: string; path: string } | undefined {
  const { webhook, webhookV2 } = input;
  if (webhook !== undefined && webhookV2 !== undefined && webhook !== webhookV2)
    throw new GpufleetError('BAD_REQUEST', 'webhook and webhookV2 name different URLs; a job has one webhook: give one of them.', {
      errors: ['$.webhookV2: must be absent or equal to $.webhook'],
    });
  if (webhook !== undefined) return { url: webhook, path: '$.webhook' };
  if (webhookV2 !== undefined) return { url: webhookV2, path: '$.webhookV2' };
  return undefined;
}

/** a refusal of the webhook address, named at the field the user sent it in */
function atPath(e: unknown, path: string): unknown {
  if (!isGpufleetError(e) || path === '$.webhook' || !e.errors) return e;
  return new GpufleetError(e.code, e.message.replace(/^The webhook/, `The ${path.slice(2)}`), { errors: e.errors.map((l) => l.replace(/^\$\.webhook:/, `${path}:`)), cause: e });
}

function notFound(jobId: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `Job ${jobId} was not found (unknown, or its result has expired).`, { fields: { jobId } });
}
