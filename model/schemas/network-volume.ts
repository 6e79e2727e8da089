// JSON Schemas of the network volume requests. Create accepts the v1 name `dataCenterId` and the
// v2 name `dataCenter` (the public v2 API renamed it); exactly one data center must result.
import { nameSchema, tagsSchema } from './common.ts';
import type { InputOf } from './input-type.ts';

export const NETWORK_VOLUME_TYPES = ['STANDARD', 'HIGH_PERFORMANCE'] as const;
export type NetworkVolumeType = (typeof NETWORK_VOLUME_TYPES)[number];

const sizeSchema = { type: 'integer', minimum: 1, maximum: 10000, description: 'GB; may grow, never shrink' } as const;
const dcSchema = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const networkVolumeCreateSchema = {
  $id: 'NetworkVolumeCreate',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'size'],
  properties: {
    name: nameSchema,
    size: sizeSchema,
    dataCenterId: dcSchema,
    dataCenter: { ...dcSchema, description: 'v2 name of dataCenterId' },
    type: { type: 'string', enum: [...NETWORK_VOLUME_TYPES] },
    tags: tagsSchema,
  },
} as const;

export const networkVolumeUpdateSchema = {
  $id: 'NetworkVolumeUpdate',
  type: 'object',
  additionalProperties: false,
  properties: { name: nameSchema, size: sizeSchema, tags: tagsSchema },
} as const;

export type NetworkVolumeCreateInput = InputOf<typeof networkVolumeCreateSchema>;
export type NetworkVolumeUpdateInput = InputOf<typeof networkVolumeUpdateSchema>;

/**
 * A network volume as the routes answer it (core/volumes toNetworkVolumeView). Answers are written
 * from this schema: a field added to the view goes here too (test/api/schemas/serializers-on-off.test.ts).
 */
export const networkVolumeViewSchema = {
  type: 'object',
  required: ['id', 'name', 'size', 'dataCenterId', 'dataCenter', 'type', 'tags', 'createdAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    size: { type: 'integer', description: 'GB' },
    dataCenterId: { type: 'string' },
    dataCenter: { type: 'string', description: 'the same data center, under its v2 name' },
    type: { type: 'string', enum: [...NETWORK_VOLUME_TYPES] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
