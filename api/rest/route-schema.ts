// Route schemas feed the OpenAPI document and the request types (RestTypeProvider below); request
// validation itself runs in the services with the same model schemas (so GraphQL and the constructs
// get identical answers), see server.ts. So a handler hands `request.body` to a service, which
// validates it, and reads no field of it first. Query values arrive as the query parser left them
// (nothing coerces "true" to true), which is why flags are declared as the strings sent (queryFlag).
import type { FastifyTypeProvider } from 'fastify';
import type { JSONSchema } from 'json-schema-to-ts';
import type { InputOf } from '../../model/index.ts';

/**
 * Request types (params, querystring, headers, body) from the route schemas through json-schema-to-ts,
 * as @fastify/type-provider-json-schema-to-ts does, reading `default` as the model does (InputOf).
 * Replies are not typed from `response`: routes list their error codes there (thrown, and rendered by
 * errors/problem.ts) and mostly no success schema, so that provider would type a success reply as a
 * problem body; and podViewSchema's oneOf is a union PodView does not state.
 */
export interface RestTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends JSONSchema ? InputOf<this['schema']> : unknown;
  readonly serializer: unknown;
}

export { docSchema } from '../schemas/model-schemas.ts';
export { bodyByHand, bodyCheck, queryByHand } from '../schemas/request-validators.ts';

export const problemSchema = {
  type: 'object',
  description: 'application/problem+json',
  required: ['title', 'status', 'detail'],
  properties: {
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'array', items: { type: 'string' } },
  },
  // RFC 9457 extension members (a quota's limit, a retry time, …) are written as they are
  additionalProperties: true,
} as const;

export function errorResponses(...codes: number[]): Record<number, typeof problemSchema> {
  return Object.fromEntries(codes.map((c) => [c, problemSchema]));
}

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

/** A query flag as sent: only "true" turns it on (see the comment at the top). */
export const queryFlag = (description: string) => ({ type: 'string', enum: ['true', 'false'], description }) as const;
