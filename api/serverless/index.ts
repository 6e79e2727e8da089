// The public v2 serverless endpoint routes (`/v2/serverless`, runpod-compat.md 4.2) over the same
// records as `/v1/endpoints`; core/endpoints/endpoint-v2.ts maps the shapes. Lists are wrapped
// (`{"endpoints": []}`), create answers 201, delete 204 (and cancels the endpoint's jobs).
// `GET /v2/serverless/{id}/workers` lists the endpoint's workers (core/workers/worker-service.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { workerListViewSchema, endpointMetricsQuerySchema, endpointMetricsSchema, endpointV2CreateSchema, endpointV2UpdateSchema, endpointV2ViewSchema, GpufleetError } from '../../model/index.ts';
import { createEndpointV2, endpointV2Containers, toEndpointV2View, updateEndpointV2, type EndpointService, type WorkerService } from '../../core/index.ts';
import { parseMetricsWindow, windowView, type EndpointHistory } from '../../core/index.ts';
import type { EndpointRecord } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { docSchema, errorResponses, idParams, queryByHand } from '../rest/route-schema.ts';
import type { Principal } from '../../model/index.ts';

export { workerLogRoutes } from './worker-logs.ts';
export { jobHistoryRoutes } from './job-history.ts';

const tags = ['serverless'];
const idOf = (r: FastifyRequest) => (r.params as { id: string }).id;
/** where the caller reached the API, for the endpoint's `requestUrls` */
const originOf = (r: FastifyRequest) => `${r.protocol}://${r.host}`;

function noQuery(r: FastifyRequest): void {
  const keys = Object.keys((r.query ?? {}) as object);
  if (keys.length) throw new GpufleetError('VALIDATION_FAILED', `Unknown query parameter(s): ${keys.join(', ')}`, { errors: keys.map((k) => `$.${k}: unknown query parameter`) });
}

export function serverlessV2Routes(app: FastifyInstance, endpoints: EndpointService, workers: WorkerService, history: EndpointHistory, lbDomain?: string): void {
  /** the v2 Endpoint with its template's container fields */
  const view = async (p: Principal, e: EndpointRecord, origin: string) =>
    toEndpointV2View(e, origin, lbDomain, (await endpointV2Containers(endpoints, p, [e])).get(e.id));
  app.get(
    '/v2/serverless',
    { config: { scope: 'read' }, schema: { tags, summary: 'List serverless endpoints', response: { 200: { type: 'object', properties: { endpoints: { type: 'array', items: endpointV2ViewSchema } } }, ...errorResponses(401, 422, 429) } } },
    async (request) => {
      noQuery(request);
      const p = principalOf(request);
      const list = await endpoints.list(p);
      const containers = await endpointV2Containers(endpoints, p, list);
      return { endpoints: list.map((e) => toEndpointV2View(e, originOf(request), lbDomain, containers.get(e.id))) };
    },
  );

  app.post(
    '/v2/serverless',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Create a serverless endpoint', body: docSchema(endpointV2CreateSchema), response: { 201: endpointV2ViewSchema, ...errorResponses(400, 401, 403, 422, 429) } } },
    async (request, reply) => {
      const e = await createEndpointV2(endpoints, principalOf(request), request.body);
      return reply.code(201).send(await view(principalOf(request), e, originOf(request)));
    },
  );

  app.get(
    '/v2/serverless/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'Get a serverless endpoint', params: idParams, response: { 200: endpointV2ViewSchema, ...errorResponses(401, 404, 422, 429) } } },
    async (request) => {
      noQuery(request);
      return view(principalOf(request), await endpoints.get(principalOf(request), idOf(request)), originOf(request));
    },
  );

  app.patch(
    '/v2/serverless/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Update a serverless endpoint (only the fields sent change)', params: idParams, body: docSchema(endpointV2UpdateSchema), response: { 200: endpointV2ViewSchema, ...errorResponses(400, 401, 403, 404, 422, 429) } } },
    async (request) => view(principalOf(request), await updateEndpointV2(endpoints, principalOf(request), idOf(request), request.body), originOf(request)),
  );

  app.delete(
    '/v2/serverless/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Delete a serverless endpoint: its queued and running jobs are cancelled, its workers stopped', params: idParams, response: errorResponses(401, 403, 404, 429) } },
    async (request, reply) => {
      await endpoints.delete(principalOf(request), idOf(request));
      return reply.code(204).send();
    },
  );

  app.get(
    '/v2/serverless/:id/workers',
    { config: { scope: 'read' }, schema: { tags, summary: "List a serverless endpoint's workers with their state", params: idParams, response: { 200: workerListViewSchema, ...errorResponses(401, 404, 422, 429) } } },
    async (request) => {
      noQuery(request);
      return { workers: await workers.list(principalOf(request), idOf(request)) };
    },
  );

  app.get(
    '/v2/serverless/:id/metrics',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: "A serverless endpoint's metrics over time: workers by state, queue depth, delay, execution time and cold start percentiles per step",
        params: idParams,
        querystring: queryByHand(endpointMetricsQuerySchema),
        response: { 200: endpointMetricsSchema, ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (request) => {
      const e = await endpoints.get(principalOf(request), idOf(request));
      const w = parseMetricsWindow((request.query ?? {}) as Record<string, unknown>, Date.now());
      return {
        endpointId: e.id,
        ...windowView(w),
        buckets: await history.query(e.id, w.from, w.to, w.step),
      };
    },
  );
}
