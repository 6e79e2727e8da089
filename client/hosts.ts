// `/v2/hosts` (operators, admin keys; docs/fleet.md): the hosts with their GPUs, and each GPU's
// utilisation, memory, temperature and power over time (docs/gpu-metrics.md).
import type { ApiClient } from './api-client.ts';
import { metricsQueryString, type EndpointMetricsQuery } from './endpoints.ts';
import type { ResourceView } from './resource-api.ts';

/** mean, highest and last of the polls within a bucket */
export interface GpuUsageStat {
  mean: number;
  max: number;
  last: number;
}

/** one step of a GPU's history; a field is null where no poll in the bucket gave a value */
export interface GpuUsageBucket {
  /** RFC 3339; the bucket is [start, start + step) */
  start: string;
  /** polls within the bucket */
  samples: number;
  /** utilization.gpu as a ratio, 0 to 1 */
  utilization: GpuUsageStat | null;
  memoryUsedBytes: GpuUsageStat | null;
  memoryTotalBytes: GpuUsageStat | null;
  temperatureC: GpuUsageStat | null;
  powerWatts: GpuUsageStat | null;
}

/** a GPU's last poll; a value is null where the driver gave none (`[N/A]`) */
export interface GpuUsageNow {
  at: string;
  utilization: number | null;
  memoryUsedBytes: number | null;
  memoryTotalBytes: number | null;
  temperatureC: number | null;
  powerWatts: number | null;
}

export interface HostMetrics {
  hostId: string;
  from: string;
  to: string;
  /** seconds */
  step: number;
  /** the replica that answered polls the host now (with several replicas, history is each replica's own) */
  sampling: boolean;
  gpus: { index: number; uuid: string; name: string; current: GpuUsageNow | null; buckets: GpuUsageBucket[] }[];
}

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
