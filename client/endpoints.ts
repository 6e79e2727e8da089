// Typed calls for serverless endpoints (`/v2/serverless`, runpod-compat.md 4.2) and their workers.
// Used by `gpufleet endpoints`.
import type { ApiClient } from './api-client.ts';

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

export class EndpointsApi {
  constructor(private readonly client: ApiClient) {}

  create(input: Record<string, unknown>): Promise<EndpointView> {
    return this.client.post<EndpointView>('/v2/serverless', input);
  }

  async list(): Promise<EndpointView[]> {
    return (await this.client.get<{ endpoints: EndpointView[] }>('/v2/serverless')).endpoints;
  }

  get(id: string): Promise<EndpointView> {
    return this.client.get<EndpointView>(`/v2/serverless/${encodeURIComponent(id)}`);
  }

  update(id: string, input: Record<string, unknown>): Promise<EndpointView> {
    return this.client.patch<EndpointView>(`/v2/serverless/${encodeURIComponent(id)}`, input);
  }

  delete(id: string): Promise<void> {
    return this.client.delete(`/v2/serverless/${encodeURIComponent(id)}`);
  }

  async workers(id: string): Promise<WorkerView[]> {
    return (await this.client.get<{ workers: WorkerView[] }>(`/v2/serverless/${encodeURIComponent(id)}/workers`)).workers;
  }
}
