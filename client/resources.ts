// Typed calls for the resource groups the CLI and a console read and change: templates, network
// volumes, registry credentials, public endpoints (the model catalog), the GPU/CPU catalog with
// stock and prices, billing records, events, and the caller's own account.
import type {
  EventView,
  NetworkVolumeCreateInput,
  NetworkVolumeUpdateInput,
  PublicEndpointCreateInput,
  RegistryCreateInput,
  RegistryUpdateInput,
  TemplateCreateInput,
  TemplateUpdateInput,
} from '../model/index.ts';
import type { ApiClient } from './api-client.ts';
import { queryString, ResourceApi, type Query, type ResourceView } from './resource-api.ts';

/** `/v2/templates` (docs/templates.md) */
export class TemplatesApi extends ResourceApi<ResourceView, TemplateCreateInput, TemplateUpdateInput> {
  constructor(client: ApiClient) {
    super(client, '/v2/templates', 'templates');
  }
}

/** `/v2/network-volumes` (docs/network-volumes.md) */
export class NetworkVolumesApi extends ResourceApi<ResourceView, NetworkVolumeCreateInput, NetworkVolumeUpdateInput> {
  constructor(client: ApiClient) {
    super(client, '/v2/network-volumes', 'networkVolumes');
  }
}

/** `/v2/registries`: container registry credentials (docs/registries.md); the password is never shown */
export class RegistriesApi extends ResourceApi<ResourceView, RegistryCreateInput, RegistryUpdateInput> {
  constructor(client: ApiClient) {
    super(client, '/v2/registries', 'registries');
  }
}

/** a public endpoint is known by its slug (docs/public-endpoints.md) */
export interface PublicEndpointView {
  slug: string;
  [field: string]: unknown;
}

/** `/v2/public-endpoints`: the model catalog every account may call (operators create and delete) */
export class PublicEndpointsApi extends ResourceApi<PublicEndpointView, PublicEndpointCreateInput, never> {
  constructor(client: ApiClient) {
    super(client, '/v2/public-endpoints', null);
  }
}

/** `/v2/catalog/*`: GPU types with prices and stock, CPU flavours, data centers (docs/gpu-catalog.md) */
export class CatalogApi {
  constructor(private readonly client: ApiClient) {}

  async gpus(query?: Query): Promise<ResourceView[]> {
    return (await this.client.get<{ gpus: ResourceView[] }>(`/v2/catalog/gpus${queryString(query)}`)).gpus;
  }

  gpu(id: string): Promise<ResourceView> {
    return this.client.get<ResourceView>(`/v2/catalog/gpus/${encodeURIComponent(id)}`);
  }

  async cpus(): Promise<ResourceView[]> {
    return (await this.client.get<{ cpus: ResourceView[] }>('/v2/catalog/cpus')).cpus;
  }

  async dataCenters(): Promise<ResourceView[]> {
    return (await this.client.get<{ dataCenters: ResourceView[] }>('/v2/catalog/datacenters')).dataCenters;
  }
}

export const BILLING_KINDS = ['pods', 'network-volumes', 'endpoints', 'serverless'] as const;
export type BillingKind = (typeof BILLING_KINDS)[number];

/** `GET /v2/billing/{kind}`: records per time bucket and resource, with totals (docs/billing.md) */
export interface BillingAnswer {
  records: Record<string, unknown>[];
  metadata: Record<string, unknown>;
}

export class BillingApi {
  constructor(private readonly client: ApiClient) {}

  /** query: startTime, endTime (RFC 3339), bucketSize (hour | day | week | month), and the kind's id filter */
  records(kind: BillingKind, query?: Query): Promise<BillingAnswer> {
    return this.client.get<BillingAnswer>(`/v2/billing/${kind}${queryString(query)}`);
  }
}

/** `GET /v2/events`: kept events as JSON, or followed live (server-sent events) */
export class EventsApi {
  constructor(private readonly client: ApiClient) {}

  /** query: resourceId, since (RFC 3339), limit (the newest n, default 100) */
  async list(query?: Query): Promise<EventView[]> {
    return (await this.client.get<{ events: EventView[] }>(`/v2/events${queryString(query)}`)).events;
  }

  /** the kept events that match, then each new one as it happens, until `signal` aborts */
  async *follow(query?: Query, signal?: AbortSignal): AsyncGenerator<EventView> {
    for await (const e of this.client.sse(`/v2/events${queryString(query)}`, signal)) if (e.event === 'message') yield JSON.parse(e.data) as EventView;
  }
}

/** `GET /v2/account`: the caller's own account, with usage, held credits and balance */
export class AccountApi {
  constructor(private readonly client: ApiClient) {}

  get(): Promise<ResourceView> {
    return this.client.get<ResourceView>('/v2/account');
  }
}
