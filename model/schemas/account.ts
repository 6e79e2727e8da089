// Schemas of the account and API-key requests.
import { API_KEY_SCOPES, BUDGET_ACTIONS } from '../records/account.ts';
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

const count = (description: string) => ({ type: ['integer', 'null'], minimum: 0, maximum: 1_000_000, description }) as const;
const usd = (description: string) => ({ type: ['number', 'null'], minimum: 0, maximum: 1e9, description }) as const;

/** PATCH /v2/accounts/{id}/limits: each field given sets that limit, null clears it (unlimited); absent fields stay. */
export const accountLimitsPatchSchema = {
  $id: 'AccountLimitsPatch',
  type: 'object',
  additionalProperties: false,
  properties: {
    gpus: count('GPUs held at once by on-demand pods and workers, all types'),
    gpusByType: {
      type: ['object', 'null'],
      description: 'GPUs per GPU type id; a type set to null is cleared, null clears them all',
      maxProperties: 200,
      propertyNames: { minLength: 1, maxLength: 100 },
      additionalProperties: count('GPUs of this type'),
    },
    interruptibleGpus: count('GPUs held at once by interruptible pods'),
    pods: count('pods placed at once (workers not counted)'),
    workers: count('serverless workers in service, all endpoints together'),
    volumeGb: count('network volume GB, all volumes together'),
    spendPerHour: usd('USD per hour of everything that accrues now'),
    monthlyBudget: usd('USD per calendar month (UTC)'),
    budgetAction: { type: ['string', 'null'], enum: [...BUDGET_ACTIONS, null], description: 'running pods once the monthly budget is used up: keep (default) or stop' },
  },
} as const;

export type AccountLimitsPatchInput = InputOf<typeof accountLimitsPatchSchema>;
export type AccountCreateInput = InputOf<typeof accountCreateSchema>;
export type AccountCreditInput = InputOf<typeof accountCreditSchema>;
export type KeyCreateInput = InputOf<typeof keyCreateSchema>;

const nullableString = { type: ['string', 'null'] } as const;

/** An API key as `/v2/keys` answers it (never its hash; `key`, the secret, only in the create answer) */
export const apiKeyViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    accountId: { type: 'string' },
    name: { type: 'string' },
    prefix: { type: 'string' },
    scope: { type: 'string', enum: [...API_KEY_SCOPES] },
    expiresAt: nullableString,
    revokedAt: nullableString,
    lastUsedAt: nullableString,
    createdAt: { type: 'string' },
    key: { type: 'string', description: 'the secret; answered once, by create' },
  },
} as const;

/** one limit beside the account's use; `limit` null: unlimited */
const limitLineSchema = { type: 'object', properties: { limit: { type: ['number', 'null'] }, used: { type: 'number' } } } as const;

/** `GET`/`PATCH /v2/accounts/{id}/limits` (core/quotas/limits-service.ts AccountLimitsView) */
export const accountLimitsViewSchema = {
  type: 'object',
  properties: {
    accountId: { type: 'string' },
    month: { type: 'string', description: 'YYYY-MM (UTC) that monthlyBudget.used counts' },
    budgetAction: { type: 'string', enum: [...BUDGET_ACTIONS] },
    limits: {
      type: 'object',
      properties: {
        gpus: limitLineSchema,
        gpusByType: { type: 'object', additionalProperties: limitLineSchema },
        interruptibleGpus: limitLineSchema,
        pods: limitLineSchema,
        workers: limitLineSchema,
        volumeGb: limitLineSchema,
        spendPerHour: limitLineSchema,
        monthlyBudget: limitLineSchema,
      },
    },
  },
} as const;

/**
 * An account as `/v2/accounts`, `/v2/account` and the credits route answer it: the stored account
 * (model/records/account.ts AccountRecord: limits and budgetAlert when set, overlayVni once given),
 * and with `/v2/account` and credits the balance view (usage, held, clientBalance).
 */
export const accountViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    operator: { type: 'boolean' },
    balance: { type: 'number' },
    pubKey: { type: 'string' },
    overlayVni: { type: 'integer' },
    createdAt: { type: 'string' },
    limits: {
      type: 'object',
      properties: {
        ...Object.fromEntries(['gpus', 'interruptibleGpus', 'pods', 'workers', 'volumeGb', 'spendPerHour', 'monthlyBudget'].map((k) => [k, { type: 'number' }])),
        gpusByType: { type: 'object', additionalProperties: { type: 'number' } },
        budgetAction: { type: 'string' },
      },
    },
    budgetAlert: { type: 'object', properties: { month: { type: 'string' }, percent: { type: 'number' }, spent: { type: 'number' }, budget: { type: 'number' }, at: { type: 'string' } } },
    usage: { type: 'number' },
    held: { type: 'number' },
    clientBalance: { type: 'number' },
  },
} as const;
