// JSON Schemas of the container registry credential requests. The password only ever travels inward.
import { nameSchema, REGISTRY_PASSWORD_PATTERN, REGISTRY_USERNAME_PATTERN } from './common.ts';
import type { InputOf } from './input-type.ts';

// Both reach `docker login` on a host (the username as an argument, the password on stdin): a
// control character there fails the login long after the 201, or cuts the password short.
const usernameSchema = { type: 'string', minLength: 1, maxLength: 255, pattern: REGISTRY_USERNAME_PATTERN } as const;
// registry tokens (ECR, GCR JSON keys) run to a few KB; a JSON key file keeps its line breaks and tabs
const passwordSchema = { type: 'string', minLength: 1, maxLength: 16384, pattern: REGISTRY_PASSWORD_PATTERN, writeOnly: true } as const;

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
