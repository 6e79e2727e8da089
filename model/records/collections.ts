// Every stored collection, its record type, and the fields the embedded store indexes.
import type { AccountRecord, ApiKeyRecord, ConsoleSessionRecord } from './account.ts';
import type { EndpointMetricSlotRecord } from './endpoint-metrics.ts';
import type { HostRecord } from './host.ts';
import type { PodRecord } from './pod.ts';
import type {
  BillingRecord,
  CreditHoldRecord,
  EndpointRecord,
  IdempotencyRecord,
  NetworkVolumeRecord,
  PublicEndpointRecord,
  RegistryRecord,
  StackLockRecord,
  TemplateRecord,
} from './resources.ts';

export interface Collections {
  accounts: AccountRecord;
  apiKeys: ApiKeyRecord;
  pods: PodRecord;
  hosts: HostRecord;
  templates: TemplateRecord;
  networkVolumes: NetworkVolumeRecord;
  registries: RegistryRecord;
  endpoints: EndpointRecord;
  idempotency: IdempotencyRecord;
  billing: BillingRecord;
  stackLocks: StackLockRecord;
  /** the public model catalog, keyed by slug (docs/public-endpoints.md) */
  publicEndpoints: PublicEndpointRecord;
  /** credits set aside for accepted public model jobs (core/billing/credit-holds.ts) */
  creditHolds: CreditHoldRecord;
  /** web console sessions, keyed by the sha256 of their cookie (core/accounts/console-sessions.ts) */
  consoleSessions: ConsoleSessionRecord;
  /** serverless endpoints' metrics, a 10-second slot per record and writer, kept 24 h (core/workers/endpoint-history.ts) */
  endpointMetricSlots: EndpointMetricSlotRecord;
}

export const COLLECTION_NAMES = [
  'accounts',
  'apiKeys',
  'pods',
  'hosts',
  'templates',
  'networkVolumes',
  'registries',
  'endpoints',
  'idempotency',
  'billing',
  'stackLocks',
  'publicEndpoints',
  'creditHolds',
  'consoleSessions',
  'endpointMetricSlots',
] as const satisfies readonly (keyof Collections)[];

export const INDEXED_FIELDS: Partial<Record<keyof Collections, readonly string[]>> = {
  apiKeys: ['hash', 'accountId'],
  // overlayVni: a new account overlay's VXLAN id is checked free by lookup (core/pods/global-networking.ts)
  accounts: ['overlayVni'],
  // name: the per-account uniqueness check on create and rename looks pods up by name
  // endpointId: an endpoint's workers (model/records/worker.ts) are read on every autoscaler tick
  // overlayIp: a new global-networking address is checked free by lookup (core/pods/overlay-address.ts)
  pods: ['accountId', 'hostId', 'name', 'endpointId', 'overlayIp'],
  templates: ['accountId'],
  networkVolumes: ['accountId'],
  registries: ['accountId'],
  endpoints: ['accountId'],
  // resourceId: closing a resource's open record must not scan the account's whole history
  billing: ['accountId', 'resourceId'],
  // endpointId: a job's result finds its model (and price) by the endpoint it ran on
  publicEndpoints: ['endpointId'],
  // accountId: a submission sums the account's holds; jobId: a final job finds its hold
  creditHolds: ['accountId', 'jobId'],
  // keyId: revoking a key ends its sessions; accountId: a sign-in sweeps the account's expired ones
  consoleSessions: ['keyId', 'accountId'],
  // endpointId: a deleted endpoint's slots go; hour: a query reads its window's hours, the sweep the expired ones
  endpointMetricSlots: ['endpointId', 'hour'],
};
