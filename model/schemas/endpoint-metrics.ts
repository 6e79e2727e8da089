// GET /v2/serverless/{id}/metrics (docs/serverless.md, "Metrics over time"): its query and its answer.
const count = { type: 'integer', minimum: 0 } as const;
const ms = { type: ['integer', 'null'], minimum: 0 } as const;

const percentiles = {
  type: 'object',
  additionalProperties: false,
  required: ['count', 'p50', 'p90', 'p99'],
  properties: { count, p50: ms, p90: ms, p99: ms },
} as const;

const workers = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['idle', 'running', 'initializing', 'throttled', 'unhealthy'],
  properties: { idle: count, running: count, initializing: count, throttled: count, unhealthy: count },
} as const;

/** the window of every metrics-over-time route (the serverless endpoint's, the host's GPUs') */
export const metricsWindowQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', description: 'RFC 3339 time or Unix seconds; default: an hour before `to`' },
    to: { type: 'string', description: 'RFC 3339 time or Unix seconds; default and latest: now' },
    step: { type: 'string', description: 'bucket width: a duration of at least 10s (60s, 5m, 1h) or seconds; default 60s; at most 1440 buckets' },
  },
} as const;

export const endpointMetricsQuerySchema = metricsWindowQuerySchema;

export const endpointMetricsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['endpointId', 'from', 'to', 'step', 'buckets'],
  properties: {
    endpointId: { type: 'string' },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    /** seconds */
    step: { type: 'integer', minimum: 10 },
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['start', 'workers', 'queue', 'jobs', 'delayMs', 'executionMs', 'coldStartMs'],
        properties: {
          start: { type: 'string', format: 'date-time' },
          workers,
          queue: {
            type: ['object', 'null'],
            additionalProperties: false,
            required: ['inQueue', 'inProgress', 'maxInQueue'],
            properties: { inQueue: count, inProgress: count, maxInQueue: count },
          },
          jobs: {
            type: 'object',
            additionalProperties: false,
            required: ['completed', 'failed', 'cancelled', 'timedOut'],
            properties: { completed: count, failed: count, cancelled: count, timedOut: count },
          },
          delayMs: percentiles,
          executionMs: percentiles,
          coldStartMs: percentiles,
        },
      },
    },
  },
} as const;
