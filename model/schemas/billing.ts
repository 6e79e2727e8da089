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
