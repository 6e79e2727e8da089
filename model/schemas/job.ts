// JSON Schemas of the job interface (runpod-compat.md 2.1): the body of `run` / `runsync`, and the
// bodies a worker posts to job-done and job-stream (worker protocol, 3.2). Durations are in
// milliseconds, as the public platform takes them; the limits are the queue's (core/jobs/job.ts).

const SECOND = 1000;
const DAY = 86_400_000;

/** the limits of `policy` (the queue checks the same numbers: core/jobs/job.ts JOB_LIMITS) */
export const JOB_POLICY_LIMITS = {
  executionTimeout: { min: 5 * SECOND, max: 7 * DAY },
  ttl: { min: 10 * SECOND, max: 7 * DAY },
} as const;

export const jobRunSchema = {
  $id: 'JobRun',
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    input: { description: "the handler's input: any JSON value but null", not: { type: 'null' } },
    webhook: { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL POSTed the final job (2 retries, 10 s apart)' },
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

export interface JobRunInput {
  input: unknown;
  webhook?: string;
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
