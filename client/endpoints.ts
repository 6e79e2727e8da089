// Typed calls for serverless endpoints (`/v2/serverless`, runpod-compat.md 4.2) and their workers.
// Used by `gpufleet endpoints`.
import type { JobHistoryItem, JobHistoryPage } from '../model/index.ts';
import type { ApiClient } from './api-client.ts';
import type { LogQuery, PodLogEvent } from './pods.ts';
import { queryString, ResourceApi } from './resource-api.ts';

/** the fields of an endpoint view the CLI reads; the API answers more (core/endpoints/endpoint-v2.ts) */
export interface EndpointView {
  id: string;
  name: string;
  type: string;
  templateId: string;
  workers?: { min?: number; max?: number; idleTimeout?: number };
  [field: string]: unknown;
}

export interface WorkerView {
  id: string;
  state?: string;
  [field: string]: unknown;
}

/** percentiles in milliseconds of what happened within a bucket; null when nothing did */
export interface MetricsPercentiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** one step of GET /v2/serverless/{id}/metrics (docs/serverless.md, "Metrics over time") */
export interface EndpointMetricsBucket {
  /** RFC 3339; the bucket is [start, start + step) */
  start: string;
  /** workers by state at the bucket's end; null before the control plane began recording */
  workers: { idle: number; running: number; initializing: number; throttled: number; unhealthy: number } | null;
  /** the queue at the bucket's end and the most jobs waiting at a sample within it; null before recording began */
  queue: { inQueue: number; inProgress: number; maxInQueue: number } | null;
  /** jobs that reached a final status within the bucket */
  jobs: { completed: number; failed: number; cancelled: number; timedOut: number };
  /** from queueing to the take, of jobs taken within the bucket */
  delayMs: MetricsPercentiles;
  /** from the take to the final status, of jobs finished within the bucket */
  executionMs: MetricsPercentiles;
  /** from a worker's creation to its first contact, of workers ready within the bucket */
  coldStartMs: MetricsPercentiles;
}

export interface EndpointMetrics {
  endpointId: string;
  from: string;
  to: string;
  /** seconds */
  step: number;
  buckets: EndpointMetricsBucket[];
}

/** the window: times as Date, RFC 3339 or Unix seconds; step as seconds or a duration ("60s", "5m") */
export interface EndpointMetricsQuery {
  from?: Date | string | number;
  to?: Date | string | number;
  step?: string | number;
}

export interface JobHistoryQuery {
  /** only these statuses */
  status?: readonly string[];
  /** jobs per page (1–100, default 20) */
  limit?: number;
  /** a page's nextCursor */
  cursor?: string;
  /** the bodies to add: input, output, error */
  include?: readonly ('input' | 'output' | 'error')[];
}

export type { JobHistoryItem, JobHistoryPage };

const metricsTime = (t: Date | string | number | undefined): string | undefined => (t instanceof Date ? t.toISOString() : t === undefined ? undefined : String(t));

/** `?from&to&step` of a metrics-over-time route (this one, a host's GPUs: hosts.ts) */
export function metricsQueryString(query: EndpointMetricsQuery): string {
  return queryString({ from: metricsTime(query.from), to: metricsTime(query.to), step: query.step === undefined ? undefined : String(query.step) });
}

/** `/v2/serverless`: list, get, create, update, delete, and each endpoint's workers, logs and metrics */
export class EndpointsApi extends ResourceApi<EndpointView> {
  constructor(client: ApiClient) {
    super(client, '/v2/serverless', 'endpoints');
  }

  /** workers by state, queue depth, delay, execution time and cold starts over time (default: the last hour in minutes) */
  metrics(id: string, query: EndpointMetricsQuery = {}): Promise<EndpointMetrics> {
    return this.client.get<EndpointMetrics>(this.one(id, `/metrics${metricsQueryString(query)}`));
  }

  /** the caller's jobs of the endpoint the queue still holds, newest first, one page */
  jobs(id: string, query: JobHistoryQuery = {}): Promise<JobHistoryPage> {
    const q = queryString({
      status: query.status?.length ? query.status.join(',') : undefined,
      limit: query.limit,
      cursor: query.cursor,
      include: query.include?.length ? query.include.join(',') : undefined,
    });
    return this.client.get<JobHistoryPage>(this.one(id, `/jobs${q}`));
  }

  async workers(id: string): Promise<WorkerView[]> {
    return (await this.client.get<{ workers: WorkerView[] }>(this.one(id, '/workers'))).workers;
  }

  /** a worker's log, as a pod's (docs/pods.md, "Logs"): with `follow: false` the entries there are now, then the end */
  workerLogs(id: string, workerId: string, query: LogQuery = {}, signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    return this.client.sse(this.one(id, `/workers/${encodeURIComponent(workerId)}/logs${queryString({ ...query })}`), signal);
  }
}
