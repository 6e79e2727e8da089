// Schemas of the stack lock requests (one apply, destroy or import of a stack at a time, per account).
import type { InputOf } from './input-type.ts';

export const STACK_LOCK_DEFAULT_TTL_SECONDS = 900;

export const stackLockAcquireSchema = {
  $id: 'StackLockAcquire',
  type: 'object',
  additionalProperties: false,
  required: ['holder'],
  properties: {
    holder: { type: 'string', minLength: 1, maxLength: 256, description: 'who holds it: user@host, pid, operation' },
    ttlSeconds: { type: 'integer', minimum: 1, maximum: 86400, description: `lease length, default ${STACK_LOCK_DEFAULT_TTL_SECONDS}` },
  },
} as const;

export type StackLockAcquireInput = InputOf<typeof stackLockAcquireSchema>;
