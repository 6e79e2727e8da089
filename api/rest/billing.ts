// v2 billing records: GET /v2/billing/pods, /network-volumes, /endpoints (serverless endpoint usage and
// public model charges, docs/public-endpoints.md) and /serverless (the public v2 name for serverless
// endpoint usage alone). Query: startTime, endTime, bucketSize, and the resource id.
import type { FastifyInstance } from 'fastify';
import { billingQuerySchema, billingReportSchema } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { billingQueryFromParams, type BillingKind, type BillingService } from '../../core/index.ts';
import { docSchema, errorResponses, queryByHand, type RestTypeProvider } from './route-schema.ts';

const ROUTES: [string, BillingKind, string, BillingKind[]][] = [
  ['/v2/billing/pods', 'pod', 'Pod usage per bucket and pod', []],
  ['/v2/billing/network-volumes', 'networkVolume', 'Network volume storage per bucket and volume', []],
  ['/v2/billing/endpoints', 'endpoint', 'Serverless endpoint usage and public model charges (endpointId = slug) per bucket and endpoint', ['public-endpoint']],
  ['/v2/billing/serverless', 'endpoint', 'Serverless endpoint usage per bucket and endpoint', []],
];

/** the billing service checks the query with the model's schema (billingQueryFromParams, then check) */
const billingQuery = queryByHand(docSchema(billingQuerySchema));

export function billingRoutes(fastify: FastifyInstance, billing: BillingService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  for (const [url, kind, summary, also] of ROUTES)
    app.get(
      url,
      { config: { scope: 'read' }, schema: { tags: ['billing'], summary, querystring: billingQuery, response: { 200: billingReportSchema, ...errorResponses(400, 401, 403, 422, 429) } } },
      async (request) => billing.records(principalOf(request), { ...billingQueryFromParams(kind, request.query), ...(also.length ? { also } : {}) }),
    );
}
