// Schemas of the fleet-admin requests.
import type { InputOf } from './input-type.ts';

export const hostEnrollSchema = {
  $id: 'HostEnroll',
  type: 'object',
  additionalProperties: false,
  required: ['ssh', 'privateKey'],
  properties: {
    ssh: { type: 'string', minLength: 3, maxLength: 300, description: 'user@host[:port]' },
    privateKey: { type: 'string', minLength: 32, maxLength: 16384, description: 'OpenSSH or PEM private key; stored encrypted' },
    dataCenterId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
    cloud: { type: 'string', enum: ['SECURE', 'COMMUNITY'] },
  },
} as const;

export const hostDrainSchema = {
  $id: 'HostDrain',
  type: 'object',
  additionalProperties: false,
  properties: { drained: { type: 'boolean', default: true } },
} as const;

export type HostEnrollInput = InputOf<typeof hostEnrollSchema>;
export type HostDrainInput = InputOf<typeof hostDrainSchema>;
