// JSON Schemas of the container registry credential requests. The password only ever travels inward.
import { nameSchema } from './common.ts';
import type { InputOf } from './input-type.ts';

const usernameSchema = { type: 'string', minLength: 1, maxLength: 255 } as const;
// registry tokens (ECR, GCR JSON keys) run to a few KB
const passwordSchema = { type: 'string', minLength: 1, maxLength: 16384, writeOnly: true } as const;

export const registryCreateSchema = {
  $id: 'RegistryCreate',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'username', 'password'],
  properties: { name: nameSchema, username: usernameSchema, password: passwordSchema },
} as const;

export const registryUpdateSchema = {
  $id: 'RegistryUpdate',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { username: usernameSchema, password: passwordSchema },
} as const;

export type RegistryCreateInput = InputOf<typeof registryCreateSchema>;
export type RegistryUpdateInput = InputOf<typeof registryUpdateSchema>;
