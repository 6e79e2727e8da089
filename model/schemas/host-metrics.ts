// GET /v2/hosts/{id}/metrics (docs/gpu-metrics.md): each GPU's utilisation, memory, temperature and
// power over time, from the GPU watcher's nvidia-smi polls; the query is the serverless metrics'
// window (metricsWindowQuerySchema).
const stat = (unit: string) =>
  ({
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['mean', 'max', 'last'],
    description: `${unit}: mean, highest and last of the polls within the bucket; null: no poll gave a value`,
    properties: { mean: { type: 'number' }, max: { type: 'number' }, last: { type: 'number' } },
  }) as const;

const value = (what: string) => ({ type: ['number', 'null'], description: `${what}; null: the driver gave no value ([N/A])` }) as const;

export const hostMetricsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['hostId', 'from', 'to', 'step', 'sampling', 'gpus'],
  properties: {
    hostId: { type: 'string' },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    /** seconds */
    step: { type: 'integer', minimum: 10 },
    sampling: { type: 'boolean', description: "this replica's GPU watcher polls the host now (it holds the host's reconcile lease); history is this replica's, in memory" },
    gpus: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['index', 'uuid', 'name', 'current', 'buckets'],
        properties: {
          index: { type: 'integer', minimum: 0 },
          uuid: { type: 'string' },
          name: { type: 'string' },
          current: {
            type: ['object', 'null'],
            additionalProperties: false,
            required: ['at', 'utilization', 'memoryUsedBytes', 'memoryTotalBytes', 'temperatureC', 'powerWatts'],
            description: 'the last poll this replica recorded (null: none in the last 24 hours)',
            properties: {
              at: { type: 'string', format: 'date-time' },
              utilization: value('utilization.gpu as a ratio, 0 to 1'),
              memoryUsedBytes: value('memory.used in bytes'),
              memoryTotalBytes: value('memory.total in bytes'),
              temperatureC: value('temperature.gpu in °C'),
              powerWatts: value('power.draw in W'),
            },
          },
          buckets: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['start', 'samples', 'utilization', 'memoryUsedBytes', 'memoryTotalBytes', 'temperatureC', 'powerWatts'],
              properties: {
                start: { type: 'string', format: 'date-time' },
                samples: { type: 'integer', minimum: 0 },
                utilization: stat('utilization.gpu as a ratio, 0 to 1'),
                memoryUsedBytes: stat('memory.used in bytes'),
                memoryTotalBytes: stat('memory.total in bytes'),
                temperatureC: stat('temperature.gpu in °C'),
                powerWatts: stat('power.draw in W'),
              },
            },
          },
        },
      },
    },
  },
} as const;

/** mean, highest and last of the polls within a bucket */
export interface GpuUsageStat {
  mean: number;
  max: number;
  last: number;
}

/** one step of a GPU's history; a field is null where no poll in the bucket gave a value */
export interface GpuUsageBucket {
  /** RFC 3339: the bucket is [start, start + step) */
  start: string;
  /** polls of this GPU within the bucket (0: none, every field null) */
  samples: number;
  /** utilization.gpu as a ratio, 0 to 1 */
  utilization: GpuUsageStat | null;
  memoryUsedBytes: GpuUsageStat | null;
  memoryTotalBytes: GpuUsageStat | null;
  temperatureC: GpuUsageStat | null;
  powerWatts: GpuUsageStat | null;
}

/** One poll of one GPU, in the API's units; null: the driver gave no value (`[N/A]`), never 0. */
export interface GpuUsage {
  /** utilization.gpu as a ratio, 0 to 1 */
  utilization: number | null;
  memoryUsedBytes: number | null;
  memoryTotalBytes: number | null;
  temperatureC: number | null;
  powerWatts: number | null;
}

export interface HostGpuMetrics {
  index: number;
  uuid: string;
  name: string;
  /** the last poll this replica recorded, with its time; null: none within the retention */
  current: ({ at: string } & GpuUsage) | null;
  buckets: GpuUsageBucket[];
}

/** GET /v2/hosts/{id}/metrics */
export interface HostMetrics {
  hostId: string;
  from: string;
  to: string;
  /** seconds */
  step: number;
  /** the replica that answered polls the host now (with several replicas, history is each replica's own) */
  sampling: boolean;
  gpus: HostGpuMetrics[];
}
