// The body of POST /v2/public-endpoints: a model of the operator's published under a slug with a
// price per unit (docs/public-endpoints.md). Slugs that are route names are refused by the service,
// from the server's own route table.
import type { InputOf } from './input-type.ts';
import { SLUG_PATTERN, TEXT_PATTERN } from './common.ts';
import { PRICING_UNITS } from '../records/resources.ts';

export const SLUG_LENGTH = { min: 3, max: 64 } as const;
/** USD per unit at most (a sanity bound: a typo of a few orders of magnitude is refused) */
export const MAX_USD_PER_UNIT = 1000;
/** units one job may report (job-output.ts refuses more), so the most maxUnitsPerJob may be */
export const MAX_UNITS_PER_JOB = 1e9;

export const publicEndpointCreateSchema = {
  $id: 'PublicEndpointCreate',
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'endpointId', 'name', 'pricing'],
  properties: {
    slug: { type: 'string', minLength: SLUG_LENGTH.min, maxLength: SLUG_LENGTH.max, pattern: SLUG_PATTERN, description: 'the endpoint id callers use: /v2/{slug}/run' },
    endpointId: { type: 'string', minLength: 1, maxLength: 64, description: "a QUEUE endpoint of the operator's account" },
    name: { type: 'string', minLength: 1, maxLength: 128, pattern: TEXT_PATTERN },
    description: { type: 'string', maxLength: 2000, pattern: TEXT_PATTERN, default: '' },
    pricing: {
      type: 'object',
      additionalProperties: false,
      required: ['unit', 'usdPerUnit'],
      properties: {
        unit: { type: 'string', enum: [...PRICING_UNITS] },
        usdPerUnit: { type: 'number', minimum: 0, maximum: MAX_USD_PER_UNIT, description: 'USD per unit; a job costs units × usdPerUnit, rounded to micro-dollars' },
        maxUnitsPerJob: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: MAX_UNITS_PER_JOB,
          description:
            "the most units one job is charged: a caller's job holds maxUnitsPerJob × usdPerUnit of their credits from submission to its end, and a job reporting more units is charged that. Default 1 for unit `request`; required for the other units",
        },
      },
    },
  },
} as const;

export type PublicEndpointCreateInput = InputOf<typeof publicEndpointCreateSchema>;
