// Stored records of the resources beside pods and hosts (templates, network volumes, registries,
// endpoints, billing), plus the bookkeeping records the API keeps.
import type { CloudTier } from './host.ts';
import type { PersistentMount } from './pod.ts';

export interface TemplateRecord {
  id: string;
  accountId: string;
  name: string;
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  mounts: { persistent?: PersistentMount };
  serverless: boolean;
  public: boolean;
  category: 'NVIDIA' | 'AMD' | 'CPU';
  startSsh: boolean;
  startJupyter: boolean;
  allowedCudaVersions: string[];
  readme: string;
  tags: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface NetworkVolumeRecord {
  id: string;
  accountId: string;
  name: string;
  size: number;
  dataCenterId: string;
  type: 'STANDARD' | 'HIGH_PERFORMANCE';
  tags: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface RegistryRecord {
  id: string;
  accountId: string;
  name: string;
  username: string;
  /** AES-256-GCM ciphertext; the password is never returned or logged */
  passwordEnc: string;
  createdAt: string;
  updatedAt: string;
}

export type ScalerType = 'QUEUE_DELAY' | 'REQUEST_COUNT';

export interface EndpointRecord {
  id: string;
  accountId: string;
  name: string;
  type: 'QUEUE' | 'LOAD_BALANCER';
  templateId: string;
  /** GPU type ids in priority order (pool names are expanded on input) */
  gpuTypeIds: string[];
  /** pool ids as the client sent them, for GraphQL `gpuIds` */
  gpuPools: string[];
  gpuCount: number;
  workersMin: number;
  workersMax: number;
  /** seconds a worker may sit idle before it is stopped */
  idleTimeout: number;
  scalerType: ScalerType;
  scalerValue: number;
  networkVolumeId: string | null;
  dataCenterIds: string[];
  cloud: CloudTier | 'ALL';
  flashboot: boolean;
  executionTimeoutMs: number;
  allowedCudaVersions: string[];
  env: Record<string, string>;
  /**
   * Another account's public template as it was when this endpoint chose it (docs/templates.md,
   * "Public templates and pinning"): workers are built from this, not from the live template, so the
   * template's owner cannot change them. Set again only when this account names `templateId` in a
   * save; null for the account's own templates (those roll live). Absent only in records written
   * before pinning existed (the upgrade at start fills it: core/endpoints/template-pins.ts).
   */
  templatePin?: TemplatePin | null;
  version: number;
  tags: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** The template fields a worker is built from, copied when an endpoint chose another account's public template. */
export interface TemplatePin {
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  allowedCudaVersions: string[];
  /** the template's updatedAt when pinned: later than this, the template has changed since */
  templateUpdatedAt: string;
  pinnedAt: string;
}

/**
 * Credits set aside for one accepted public model job (docs/security.md, "Credits are reserved"): the
 * most the job can cost, counted against the account's balance from submission until the job's charge
 * is written (settled) or the job ends without one (released). core/billing/credit-holds.ts.
 */
export interface CreditHoldRecord {
  id: string;
  accountId: string;
  /** the catalog entry (slug) the job runs, and its endpoint */
  resourceId: string;
  endpointId: string;
  /** null between the hold and the job's enqueue (a hold whose job never came is released by the sweep) */
  jobId: string | null;
  amountMicros: number;
  createdAt: string;
}

export interface IdempotencyRecord {
  /** `${accountId}:${key}` */
  id: string;
  accountId: string;
  bodyHash: string;
  statusCode: number;
  response: unknown;
  createdAt: string;
}

/**
 * One stretch of time a resource accrued cost at a constant rate. Open while `endedAt` is null.
 * A `public-endpoint` record is a one-off charge instead: `amountMicros` at `startedAt` (= `endedAt`),
 * rates 0, `resourceId` the model's slug (docs/public-endpoints.md, "Charges").
 */
export interface BillingRecord {
  id: string;
  accountId: string;
  kind: 'pod' | 'endpoint' | 'networkVolume' | 'public-endpoint';
  resourceId: string;
  /** `endpoint` records: the worker (a pod record) whose time this is; resourceId is the endpoint */
  podId?: string;
  /** `public-endpoint` records: the charge in integer micro-dollars (1e-6 USD) */
  amountMicros?: number;
  /** `public-endpoint` records: the job charged, and the units it used of the model's pricing unit */
  jobId?: string;
  units?: number;
  gpuTypeId: string | null;
  /** USD per hour during this stretch */
  rate: number;
  gpuRate: number;
  cpuRate: number;
  diskRate: number;
  startedAt: string;
  endedAt: string | null;
}

export interface StackLockRecord {
  /** stack name */
  id: string;
  holder: string;
  acquiredAt: string;
  expiresAt: string;
}

export const PRICING_UNITS = ['image', 'megapixel', 'second', 'token', 'request'] as const;
export type PricingUnit = (typeof PRICING_UNITS)[number];

/** A model of the public catalog (docs/public-endpoints.md): a slug over one of the operator's endpoints. */
export interface PublicEndpointRecord {
  /** the slug */
  id: string;
  /** the operator account that published it, owner of the backing endpoint */
  accountId: string;
  endpointId: string;
  name: string;
  description: string;
  /**
   * maxUnitsPerJob: the most units one job is charged (its hold is maxUnitsPerJob × usdPerUnit; a job
   * reporting more is charged that). Default 1 for `request`; required for other units when published,
   * absent only in entries published before holds existed (those jobs are checked, not held).
   */
  pricing: { unit: PricingUnit; usdPerUnit: number; maxUnitsPerJob?: number };
  createdAt: string;
}
