// JSON Schemas of the v1 serverless endpoint requests (spec 2.5, public v1 EndpointCreateInput).
// Create and GraphQL saveEndpoint share the field list; PATCH takes the same fields, none required.
import { cudaVersionsSchema, envSchema, nameSchema, tagsSchema } from './common.ts';
import type { InputOf } from './input-type.ts';

export const ENDPOINT_TYPES = ['QUEUE', 'LOAD_BALANCER'] as const;
export const SCALER_TYPES = ['QUEUE_DELAY', 'REQUEST_COUNT'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

const idSchema = { type: 'string', minLength: 1, maxLength: 64 } as const;

const endpointFields = {
  name: nameSchema,
  templateId: idSchema,
  type: { type: 'string', enum: [...ENDPOINT_TYPES] },
  // CPU endpoints are not offered yet; the v1 field is accepted so clients that always send it work
  computeType: { type: 'string', enum: ['GPU'] },
  gpuTypeIds: {
    type: 'array',
    minItems: 1,
    maxItems: 32,
    description: 'GPU type ids or pool ids (AMPERE_16, ADA_24, ...) in priority order',
    items: { type: 'string', minLength: 1, maxLength: 128 },
  },
  gpuCount: { type: 'integer', minimum: 1, maximum: 16 },
  workersMin: { type: 'integer', minimum: 0, maximum: 1000 },
  workersMax: { type: 'integer', minimum: 0, maximum: 1000 },
  idleTimeout: { type: 'integer', minimum: 1, maximum: 86400, description: 'seconds' },
  scalerType: { type: 'string', enum: [...SCALER_TYPES] },
  scalerValue: { type: 'integer', minimum: 1, maximum: 100000 },
  networkVolumeId: { type: ['string', 'null'], minLength: 1, maxLength: 64 },
  dataCenterIds: { type: 'array', maxItems: 32, items: idSchema },
  cloud: { type: 'string', enum: ['SECURE', 'COMMUNITY', 'ALL'] },
  flashboot: { type: 'boolean' },
  executionTimeoutMs: { type: 'integer', minimum: 1000, maximum: 604_800_000, description: 'ms, at most 7 days' },
  allowedCudaVersions: cudaVersionsSchema,
  env: envSchema,
  tags: tagsSchema,
} as const;

export const endpointCreateSchema = {
  $id: 'EndpointCreate',
  type: 'object',
  additionalProperties: false,
  required: ['templateId', 'gpuTypeIds'],
  properties: endpointFields,
} as const;

/** GraphQL saveEndpoint: create, or replace every field when `id` is given. */
export const endpointSaveSchema = {
  $id: 'EndpointSave',
  type: 'object',
  additionalProperties: false,
  required: ['templateId', 'gpuTypeIds'],
  properties: { id: idSchema, ...endpointFields },
} as const;

export const endpointUpdateSchema = {
  $id: 'EndpointUpdate',
  type: 'object',
  additionalProperties: false,
  properties: endpointFields,
} as const;

export type EndpointCreateInput = InputOf<typeof endpointCreateSchema>;
export type EndpointSaveInput = InputOf<typeof endpointSaveSchema>;
export type EndpointUpdateInput = InputOf<typeof endpointUpdateSchema>;

/** The public platform's defaults; idleTimeout is in seconds there too. */
export const ENDPOINT_DEFAULTS = {
  type: 'QUEUE',
  gpuCount: 1,
  workersMin: 0,
  workersMax: 3,
  idleTimeout: 5,
  scalerType: 'QUEUE_DELAY',
  scalerValue: 4,
  cloud: 'ALL',
  flashboot: false,
  executionTimeoutMs: 600_000,
} as const;
