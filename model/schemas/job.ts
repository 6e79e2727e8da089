// JSON Schemas of the job interface (runpod-compat.md 2.1): the body of `run` / `runsync`, and the
// bodies a worker posts to job-done and job-stream (worker protocol, 3.2). Durations are in
// milliseconds, as the public platform takes them; the limits are the queue's (model/records/job.ts).
import { JOB_POLICY_LIMITS } from '../records/job.ts';

const webhookUrlSchema = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const s3Text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

/**
 * `s3Config`: the bucket the worker uploads its results to (runpod-python's rp_upload reads it from
 * the job). The control plane never calls it: it hands it to the worker with the job, and keeps the
 * secret sealed meanwhile (docs/jobs.md).
 */
export const jobS3ConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['accessId', 'accessSecret', 'bucketName', 'endpointUrl'],
  properties: {
    accessId: s3Text(256),
    accessSecret: s3Text(1024),
    bucketName: s3Text(255),
    endpointUrl: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'http(s) URL of the S3-compatible service' },
    objectPath: s3Text(1024),
  },
} as const;

export const jobRunSchema = {
  $id: 'JobRun',
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    input: { description: "the handler's input: any JSON value but null", not: { type: 'null' } },
    webhook: { ...webhookUrlSchema, description: 'http(s) URL POSTed the final job (2 retries, 10 s apart)' },
    webhookV2: { ...webhookUrlSchema, description: 'the same as webhook (one of the two, or both the same URL)' },
    s3Config: jobS3ConfigSchema,
    policy: {
      type: 'object',
      additionalProperties: false,
      properties: {
        executionTimeout: { type: 'integer', minimum: JOB_POLICY_LIMITS.executionTimeout.min, maximum: JOB_POLICY_LIMITS.executionTimeout.max, description: 'ms' },
        ttl: { type: 'integer', minimum: JOB_POLICY_LIMITS.ttl.min, maximum: JOB_POLICY_LIMITS.ttl.max, description: 'ms from submission' },
        lowPriority: { type: 'boolean' },
      },
    },
  },
} as const;

export interface JobS3Config {
  accessId: string;
  accessSecret: string;
  bucketName: string;
  endpointUrl: string;
  objectPath?: string;
}

export interface JobRunInput {
  input: unknown;
  webhook?: string;
  webhookV2?: string;
  s3Config?: JobS3Config;
  policy?: { executionTimeout?: number; ttl?: number; lowPriority?: boolean };
}

/**
 * job-done: `{"output": …}`, `{"error": …}` (a JSON string from runpod-python), `stopPod: true` to be
 * recycled, and `status: "IN_PROGRESS"` for a progress update. Other keys are ignored, as workers
 * of other versions may add some.
 */
export const jobDoneSchema = {
  $id: 'JobDone',
  type: 'object',
  properties: {
    output: {},
    error: {},
    stopPod: { type: 'boolean' },
    status: { type: 'string' },
  },
} as const;

export interface JobDoneInput {
  output?: unknown;
  error?: unknown;
  stopPod?: boolean;
  status?: string;
}

/** job-stream: one streamed item, `{"output": item}` */
export const jobStreamSchema = {
  $id: 'JobStream',
  type: 'object',
  required: ['output'],
  properties: { output: {} },
} as const;

export interface JobStreamInput {
  output: unknown;
}

/** any JSON value, written unchanged (fast-json-stringify writes a schema with no type as JSON.stringify does) */
const anyJson = { description: 'any JSON value, as the handler returned it' } as const;

/**
 * A job as the job interface answers it (core/jobs/job-service.ts JobView: run, runsync, status,
 * status-sync, cancel, retry). Fields other than id and status are present only when known.
 */
export const jobViewSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', description: 'IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED, TIMED_OUT, or THROTTLED (queued, no worker possible: see reason)' },
    reason: { type: 'string' },
    delayTime: { type: 'integer', description: 'ms from entering the queue to the take' },
    executionTime: { type: 'integer', description: 'ms from the take to the final status' },
    output: anyJson,
    error: { ...anyJson, description: "the handler's error (a string)" },
    workerId: { type: 'string' },
    retries: { type: 'integer', description: 'times the job went back to the queue' },
  },
} as const;

/** `stream`: the chunks no earlier poll returned */
export const jobStreamViewSchema = {
  type: 'object',
  required: ['id', 'status', 'stream'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string' },
    stream: { type: 'array', items: { type: 'object', properties: { output: anyJson } } },
  },
} as const;

export const jobPurgeViewSchema = {
  type: 'object',
  properties: { removed: { type: 'integer' }, status: { type: 'string' } },
} as const;

const counts = (names: readonly string[]) => ({ type: 'object', properties: Object.fromEntries(names.map((n) => [n, { type: 'integer' }])) });

/** `health`: the endpoint's job counts and worker counts */
export const jobHealthViewSchema = {
  type: 'object',
  properties: {
    jobs: counts(['completed', 'failed', 'inProgress', 'inQueue', 'retried']),
    workers: counts(['idle', 'initializing', 'ready', 'running', 'throttled', 'unhealthy']),
  },
} as const;

/** `GET /v2/serverless/{id}/jobs`: one job of the history (core/jobs/job-history.ts toJobHistoryItem) */
export const jobHistoryItemSchema = {
  type: 'object',
  required: ['id', 'status', 'createdAt', 'queuedAt', 'retries', 'sync'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', description: 'IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED or TIMED_OUT (as stored: a queued job is IN_QUEUE here)' },
    createdAt: { type: 'string', format: 'date-time', description: 'when run/runsync accepted it' },
    queuedAt: { type: 'string', format: 'date-time', description: 'when it last entered the queue (submission or retry)' },
    startedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
    delayTime: { type: 'integer', description: 'ms from entering the queue to the take' },
    executionTime: { type: 'integer', description: 'ms from the take to the final status' },
    workerId: { type: 'string' },
    retries: { type: 'integer', description: 'times the job went back to the queue' },
    sync: { type: 'boolean', description: 'sent with runsync' },
    input: { ...anyJson, description: 'with include=input' },
    output: { ...anyJson, description: 'with include=output' },
    error: { type: 'string', description: "with include=error: the handler's error" },
  },
} as const;

export const jobHistorySchema = {
  type: 'object',
  required: ['jobs', 'nextCursor'],
  properties: {
    jobs: { type: 'array', items: jobHistoryItemSchema },
    nextCursor: { type: ['string', 'null'], description: 'pass as ?cursor= for the next page; null on the last page' },
  },
} as const;

/** the query of `GET /v2/serverless/{id}/jobs` (checked by core/jobs/job-history.ts parseJobHistoryQuery; this documents it) */
export const jobHistoryQuerySchema = {
  type: 'object',
  properties: {
    status: { type: 'string', description: 'one or more statuses, comma-separated (IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED, TIMED_OUT)' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'jobs per page; default 20' },
    cursor: { type: 'string', description: 'the nextCursor of the page before' },
    include: { type: 'string', description: 'input, output, error (comma-separated): the bodies, left out by default' },
  },
} as const;
