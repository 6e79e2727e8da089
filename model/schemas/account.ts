// Schemas of the account and API-key requests.
import { API_KEY_SCOPES } from '../records/account.ts';
import { nameSchema } from './common.ts';
import type { InputOf } from './input-type.ts';

export const accountCreateSchema = {
  $id: 'AccountCreate',
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254 },
    name: nameSchema,
    balance: { type: 'number', minimum: 0, maximum: 1e9, description: 'starting credits, USD' },
    operator: { type: 'boolean' },
  },
} as const;

export const accountCreditSchema = {
  $id: 'AccountCredit',
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: { amount: { type: 'number', minimum: -1e9, maximum: 1e9 } },
} as const;

export const keyCreateSchema = {
  $id: 'KeyCreate',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scope'],
  properties: {
    name: nameSchema,
    scope: { type: 'string', enum: [...API_KEY_SCOPES] },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    accountId: { type: 'string', minLength: 1, maxLength: 64, description: 'operators only: another account' },
  },
} as const;

export type AccountCreateInput = InputOf<typeof accountCreateSchema>;
export type AccountCreditInput = InputOf<typeof accountCreditSchema>;
export type KeyCreateInput = InputOf<typeof keyCreateSchema>;
