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
