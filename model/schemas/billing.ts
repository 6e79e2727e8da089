// Query parameters of the billing record routes (public v2 /billing/*): a time range cut into
// calendar buckets (UTC), optionally narrowed to one resource.
import type { InputOf } from './input-type.ts';

export const BUCKET_SIZES = ['hour', 'day', 'week', 'month', 'year'] as const;
export type BucketSize = (typeof BUCKET_SIZES)[number];

export const billingQuerySchema = {
  $id: 'BillingQuery',
  type: 'object',
  additionalProperties: false,
  properties: {
    startTime: { type: 'string', format: 'date-time', description: 'default: endTime − 30 days' },
    endTime: { type: 'string', format: 'date-time', description: 'default: now' },
    bucketSize: { type: 'string', enum: [...BUCKET_SIZES], description: 'default: day' },
    podId: { type: 'string', minLength: 1, maxLength: 64 },
    networkVolumeId: { type: 'string', minLength: 1, maxLength: 64 },
    endpointId: { type: 'string', minLength: 1, maxLength: 64 },
    serverlessId: { type: 'string', minLength: 1, maxLength: 64, description: 'v2 name of endpointId' },
  },
} as const;

export type BillingQueryInput = InputOf<typeof billingQuerySchema>;

const amounts = { totalAmount: { type: 'number' }, gpuAmount: { type: 'number' }, cpuAmount: { type: 'number' }, diskAmount: { type: 'number' } } as const;

/**
 * `GET /v2/billing/…` (core/billing/billing-service.ts BillingReport): one record per bucket and
 * resource (podId, networkVolumeId or endpointId; a public model's charges also name its slug), the
 * query as understood, and the totals.
 */
export const billingReportSchema = {
  type: 'object',
  properties: {
    records: {
      type: 'array',
      items: {
        type: 'object',
        properties: { startTime: { type: 'string' }, endTime: { type: 'string' }, ...amounts, podId: { type: 'string' }, networkVolumeId: { type: 'string' }, endpointId: { type: 'string' }, slug: { type: 'string' } },
      },
    },
    metadata: {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: {
            startTime: { type: 'string' },
            endTime: { type: 'string' },
            bucketSize: { type: 'string', enum: [...BUCKET_SIZES] },
            kind: { type: 'string' },
            also: { type: 'array', items: { type: 'string' } },
            resourceId: { type: ['string', 'null'] },
          },
        },
        recordCount: { type: 'integer' },
        totals: { type: 'object', properties: amounts },
      },
    },
  },
} as const;
