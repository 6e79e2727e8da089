// JSON Schemas of the template requests (v2 `Template`). One definition for REST, GraphQL's
// saveTemplate and the constructs; defaults live in TEMPLATE_DEFAULTS, not in the schema, because
// Ajv runs with useDefaults off (a PATCH must not grow fields the client did not send).
import {
  argsSchema,
  cudaVersionsSchema,
  diskSchema,
  envSchema,
  imageSchema,
  nameSchema,
  nullableIdSchema,
  portsSchema,
  tagsSchema,
} from './common.ts';
import { persistentMountSchema } from './pod.ts';
import type { InputOf } from './input-type.ts';

export const TEMPLATE_CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

const templateFields = {
  name: nameSchema,
  image: imageSchema,
  args: argsSchema,
  disk: diskSchema,
  ports: portsSchema,
  env: envSchema,
  registry: nullableIdSchema,
  // templates carry only the (deprecated) persistent mount: a network volume is bound to one data
  // center, so it belongs to the pod or endpoint, not to reusable configuration
  mounts: {
    type: 'object',
    additionalProperties: false,
    properties: { persistent: persistentMountSchema },
  },
  serverless: { type: 'boolean' },
  public: { type: 'boolean' },
  category: { type: 'string', enum: [...TEMPLATE_CATEGORIES] },
  startSsh: { type: 'boolean' },
  startJupyter: { type: 'boolean' },
  allowedCudaVersions: cudaVersionsSchema,
  readme: { type: 'string', maxLength: 65536 },
  tags: tagsSchema,
} as const;

export const templateCreateSchema = {
  $id: 'TemplateCreate',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'image'],
  properties: templateFields,
} as const;

export const templateUpdateSchema = {
  $id: 'TemplateUpdate',
  type: 'object',
  additionalProperties: false,
  properties: templateFields,
} as const;

export type TemplateCreateInput = InputOf<typeof templateCreateSchema>;
export type TemplateUpdateInput = InputOf<typeof templateUpdateSchema>;

/** v2 defaults: startSsh/startJupyter true like the public platform; disk matches the pod default. */
export const TEMPLATE_DEFAULTS = {
  args: '',
  disk: 20,
  serverless: false,
  public: false,
  category: 'NVIDIA',
  startSsh: true,
  startJupyter: true,
  readme: '',
} as const;

/**
 * A template as the REST routes answer it: the record less its account (core/endpoints
 * toTemplateView). Answers are written from this schema: a field added to TemplateRecord goes here
 * too (test/api/schemas/serializers-on-off.test.ts fails otherwise).
 */
export const templateViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    image: { type: 'string' },
    args: { type: 'string' },
    disk: { type: 'integer' },
    ports: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    registry: { type: ['string', 'null'] },
    mounts: { type: 'object', properties: { persistent: { type: 'object', properties: { size: { type: 'integer' }, path: { type: 'string' } } } } },
    serverless: { type: 'boolean' },
    public: { type: 'boolean' },
    category: { type: 'string', enum: [...TEMPLATE_CATEGORIES] },
    startSsh: { type: 'boolean' },
    startJupyter: { type: 'boolean' },
    allowedCudaVersions: { type: 'array', items: { type: 'string' } },
    readme: { type: 'string' },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;
