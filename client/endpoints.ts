// Typed calls for serverless endpoints (`/v2/serverless`, runpod-compat.md 4.2) and their workers.
// Used by `gpufleet endpoints`.
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

/** `/v2/serverless`: list, get, create, update, delete, and each endpoint's workers and their logs */
export class EndpointsApi extends ResourceApi<EndpointView> {
  constructor(client: ApiClient) {
    super(client, '/v2/serverless', 'endpoints');
  }

  async workers(id: string): Promise<WorkerView[]> {
    return (await this.client.get<{ workers: WorkerView[] }>(this.one(id, '/workers'))).workers;
  }

  /** a worker's log, as a pod's (docs/pods.md, "Logs"): with `follow: false` the entries there are now, then the end */
  workerLogs(id: string, workerId: string, query: LogQuery = {}, signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    return this.client.sse(this.one(id, `/workers/${encodeURIComponent(workerId)}/logs${queryString({ ...query })}`), signal);
  }
}
