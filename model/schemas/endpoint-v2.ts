// JSON Schemas of the public v2 serverless routes (`/v2/serverless`, runpod-compat.md 4.2) over the
// same endpoint records as v1. core/endpoints/endpoint-v2.ts maps them onto the v1 fields (one record, one set
// of rules); docs/endpoints.md lists what v2 accepts and what it does not.
import { argsSchema, cudaVersionsSchema, diskSchema, envSchema, imageSchema, nameSchema, nullableIdSchema, portsSchema, tagsSchema } from './common.ts';
import { ENDPOINT_TYPES } from './endpoint.ts';
import { requestUrlsSchema, stringArray, stringMap } from './endpoint-view.ts';

const idSchema = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const FLASHBOOT_MODES = ['OFF', 'FLASHBOOT', 'PRIORITY_FLASHBOOT'] as const;

const scalingSchema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'queueDelay'],
      properties: { type: { const: 'QUEUE_DELAY' }, queueDelay: { type: 'integer', minimum: 1, maximum: 100000, description: 'seconds a job may wait' } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'requestCount'],
      properties: { type: { const: 'REQUEST_COUNT' }, requestCount: { type: 'integer', minimum: 1, maximum: 100000, description: 'jobs per worker' } },
    },
  ],
} as const;

const v2Fields = {
  name: nameSchema,
  type: { type: 'string', enum: [...ENDPOINT_TYPES] },
  templateId: idSchema,
  scaling: scalingSchema,
  gpu: {
    type: 'object',
    additionalProperties: false,
    required: ['pools'],
    properties: {
      pools: { type: 'array', minItems: 1, maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 128 }, description: 'pool or GPU type ids, in priority order' },
      excludedTypes: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 128 } },
      count: { type: 'integer', minimum: 1, maximum: 16 },
      allowedCudaVersions: cudaVersionsSchema,
    },
  },
  // accepted so the answer can say why (CPU endpoints are not offered yet), not "unknown property"
  cpu: { type: 'array', maxItems: 16, items: { type: 'object' } },
  dataCenterIds: { type: 'array', maxItems: 32, items: idSchema },
  flashboot: { type: 'string', enum: [...FLASHBOOT_MODES] },
  networkVolumes: { type: 'array', maxItems: 1, items: idSchema, description: 'at most one network volume' },
  timeout: { type: 'integer', minimum: 1000, maximum: 604_800_000, description: 'execution timeout, ms' },
  workers: {
    type: 'object',
    additionalProperties: false,
    properties: {
      min: { type: 'integer', minimum: 0, maximum: 1000 },
      max: { type: 'integer', minimum: 0, maximum: 1000 },
      idleTimeout: { type: 'integer', minimum: 1, maximum: 86400, description: 'seconds' },
    },
  },
  env: envSchema,
  tags: tagsSchema,
  // the container fields (the public ContainerConfig; env is the endpoint's own, above): instead of a
  // templateId, the endpoint's workers are made from these (core/endpoints/endpoint-v2.ts, docs/endpoints.md)
  image: imageSchema,
  args: argsSchema,
  disk: diskSchema,
  ports: portsSchema,
  registry: nullableIdSchema,
} as const;

/** the container fields of the v2 endpoint shapes, beside `env` */
export const ENDPOINT_V2_CONTAINER_FIELDS = ['image', 'args', 'disk', 'ports', 'registry'] as const;

export const endpointV2CreateSchema = {
  $id: 'EndpointV2Create',
  type: 'object',
  additionalProperties: false,
  // templateId, or the container fields (image at least): checked in core, which says which
  required: ['name', 'type', 'scaling'],
  properties: v2Fields,
} as const;

export const endpointV2UpdateSchema = {
  $id: 'EndpointV2Update',
  type: 'object',
  additionalProperties: false,
  properties: v2Fields,
} as const;

export type EndpointV2Scaling = { type: 'QUEUE_DELAY'; queueDelay: number } | { type: 'REQUEST_COUNT'; requestCount: number };

export interface EndpointV2Input {
  name?: string;
  type?: (typeof ENDPOINT_TYPES)[number];
  templateId?: string;
  scaling?: EndpointV2Scaling;
  gpu?: { pools: string[]; excludedTypes?: string[]; count?: number; allowedCudaVersions?: string[] };
  cpu?: object[];
  dataCenterIds?: string[];
  flashboot?: (typeof FLASHBOOT_MODES)[number];
  networkVolumes?: string[];
  timeout?: number;
  workers?: { min?: number; max?: number; idleTimeout?: number };
  env?: Record<string, string>;
  tags?: Record<string, string>;
  image?: string;
  args?: string;
  disk?: number;
  ports?: string[];
  registry?: string | null;
}

/**
 * The v2 `Endpoint` as `/v2/serverless` answers it (core/endpoints/endpoint-v2.ts toEndpointV2View):
 * every field named. `requestUrls` has run…health for a QUEUE endpoint, base and health for a load
 * balancer; the container fields (image, args, disk, ports, registry) are present when the
 * endpoint's template is readable.
 */
export const endpointV2ViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    userId: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: [...ENDPOINT_TYPES] },
    templateId: { type: 'string' },
    requestUrls: requestUrlsSchema,
    gpu: { type: 'object', properties: { pools: stringArray, excludedTypes: stringArray, count: { type: 'integer' }, allowedCudaVersions: stringArray } },
    cpu: { type: 'array', items: {} },
    workers: { type: 'object', properties: { min: { type: 'integer' }, max: { type: 'integer' }, idleTimeout: { type: 'integer' } } },
    scaling: { type: 'object', properties: { type: { type: 'string' }, queueDelay: { type: 'integer' }, requestCount: { type: 'integer' } } },
    dataCenterIds: stringArray,
    networkVolumes: stringArray,
    timeout: { type: 'integer', description: 'ms' },
    flashboot: { type: 'string', enum: [...FLASHBOOT_MODES] },
    env: stringMap,
    tags: stringMap,
    version: { type: 'integer' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    image: { type: 'string' },
    args: { type: 'string' },
    disk: { type: 'integer' },
    ports: stringArray,
    registry: { type: ['string', 'null'] },
  },
} as const;
