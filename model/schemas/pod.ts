// JSON Schemas of the pod requests (create, update, action). Exported for the routes, GraphQL, the
// OpenAPI document and the declarative constructs: the one definition of what a pod may be.
import {
  argsSchema,
  cloudSchema,
  containerPathSchema,
  cudaVersionsSchema,
  diskSchema,
  envSchema,
  imageSchema,
  nameSchema,
  nullableIdSchema,
  portsSchema,
  tagsSchema,
} from './common.ts';
import type { InputOf } from './input-type.ts';

export const persistentMountSchema = {
  type: 'object',
  additionalProperties: false,
  // spec part 9: persistent pod mounts are deprecated in favor of network mounts (still accepted)
  deprecated: true,
  description: 'Deprecated: storage pinned to the host machine, lost if the host fails; use a network mount.',
  required: ['size', 'path'],
  properties: {
    size: { type: 'integer', minimum: 10, maximum: 100000, description: 'GB, minimum 10' },
    path: containerPathSchema,
  },
} as const;

export const networkMountSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['volumeId', 'path'],
  properties: {
    volumeId: { type: 'string', minLength: 1, maxLength: 64 },
    path: containerPathSchema,
  },
} as const;

export const mountsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'at most one of persistent and network (spec 2.2)',
  properties: {
    persistent: persistentMountSchema,
    network: { type: 'array', maxItems: 1, items: networkMountSchema },
  },
} as const;

export const gpuConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128, description: 'GPU type id (GET /v2/catalog/gpus)' },
    count: { type: 'integer', minimum: 1, maximum: 16, default: 1 },
    allowedCudaVersions: cudaVersionsSchema,
  },
} as const;

export const cpuConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'vcpuCount', 'memory'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 64, description: 'CPU flavor id (GET /v2/catalog/cpus)' },
    vcpuCount: { type: 'integer', minimum: 2, maximum: 512, description: 'a power of two offered by the flavor' },
    memory: { type: 'integer', minimum: 1, maximum: 4096, description: 'GB' },
  },
} as const;

/** USD per GPU-hour an interruptible pod bids; default: the GPU type's spot floor (docs/teams.md) */
export const bidPerGpuSchema = {
  type: 'number',
  exclusiveMinimum: 0,
  maximum: 1000,
  description: 'USD per GPU-hour an interruptible pod bids (only with interruptible: true); default the GPU type\'s spot floor',
} as const;

const podFields = {
  name: nameSchema,
  image: imageSchema,
  args: argsSchema,
  disk: diskSchema,
  ports: portsSchema,
  env: envSchema,
  registry: nullableIdSchema,
  mounts: mountsSchema,
  locked: { type: 'boolean' },
  globalNetworking: { type: 'boolean' },
} as const;

export const podCreateSchema = {
  $id: 'PodCreate',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    ...podFields,
    gpu: gpuConfigSchema,
    cpu: cpuConfigSchema,
    cloud: cloudSchema,
    dataCenterIds: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 64 } },
    templateId: { type: 'string', minLength: 1, maxLength: 64 },
    tags: tagsSchema,
    interruptible: {
      type: 'boolean',
      default: false,
      description: 'an interruptible (spot) GPU pod: runs at its bid and is preempted by on-demand pods and higher bids (docs/teams.md)',
    },
    bidPerGpu: bidPerGpuSchema,
  },
} as const;

/** PATCH's gpu: only the count changes in place (docs/pods.md#resizing-in-place); the type is the pod's for life */
export const gpuResizeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['count'],
  description: 'resize in place: the pod keeps its id, its container is recreated with the new GPUs; a refusal changes nothing',
  properties: { count: gpuConfigSchema.properties.count },
} as const;

export const podUpdateSchema = {
  $id: 'PodUpdate',
  type: 'object',
  additionalProperties: false,
  properties: { ...podFields, gpu: gpuResizeSchema, tags: tagsSchema },
} as const;

export const podActionSchema = {
  $id: 'PodAction',
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: { action: { type: 'string', enum: ['start', 'stop', 'restart', 'terminate'] } },
} as const;

export type PodCreateInput = InputOf<typeof podCreateSchema>;
export type PodUpdateInput = InputOf<typeof podUpdateSchema>;
export type PodActionInput = InputOf<typeof podActionSchema>;
