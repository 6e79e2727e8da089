// `/v2/hosts` (operators, admin keys; docs/fleet.md): the hosts with their GPUs, and each GPU's
// utilisation, memory, temperature and power over time (docs/gpu-metrics.md).
import type { ApiClient } from './api-client.ts';
import { metricsQueryString, type EndpointMetricsQuery } from './endpoints.ts';
import type { ResourceView } from './resource-api.ts';
import type { HostGpuMetrics, HostMetrics } from '../model/index.ts';

export type { GpuUsage, GpuUsageBucket, GpuUsageStat, HostGpuMetrics, HostMetrics } from '../model/index.ts';
/** a GPU's last poll, with its time */
export type GpuUsageNow = NonNullable<HostGpuMetrics['current']>;

export class HostsApi {
  constructor(private readonly client: ApiClient) {}

  async list(): Promise<ResourceView[]> {
    return (await this.client.get<{ hosts: ResourceView[] }>('/v2/hosts')).hosts;
  }

  get(id: string): Promise<ResourceView> {
    return this.client.get<ResourceView>(`/v2/hosts/${encodeURIComponent(id)}`);
  }

  /** each GPU's utilisation and memory over time (default: the last hour in minutes) */
  metrics(id: string, query: EndpointMetricsQuery = {}): Promise<HostMetrics> {
    return this.client.get<HostMetrics>(`/v2/hosts/${encodeURIComponent(id)}/metrics${metricsQueryString(query)}`);
  }
}
