// v1 serverless endpoint management (public v1 shapes, docs/endpoints.md): POST/GET /v1/endpoints,
// GET/PATCH/DELETE /v1/endpoints/{id}, POST /v1/endpoints/{id}/update. Create answers 200 with the
// full record and lists are bare arrays, as the public v1 API does; errors stay problem+json.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EndpointRecord } from '../../model/index.ts';
import { endpointCreateSchema, endpointUpdateSchema, endpointViewSchema } from '../../model/index.ts';
import { isGpufleetError } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { endpointRequestUrls, toEndpointView, type EndpointService, type RequestUrls } from '../../core/index.ts';
import { toTemplateView, type TemplateService } from '../../core/index.ts';
import type { WorkerService } from '../../core/index.ts';
import { listQuerySchema, parseListQuery } from './list-query.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';
import type { Principal } from '../../model/index.ts';

const tags = ['endpoints'];
const INCLUDE = { booleans: ['includeTemplate', 'includeWorkers'] } as const;
/** where the caller reached the API, for the endpoint's `requestUrls` */
const originOf = (r: FastifyRequest) => `${r.protocol}://${r.host}`;
const LIST = { strings: ['name', 'templateId'], booleans: INCLUDE.booleans, tag: true } as const;

export function endpointRoutes(fastify: FastifyInstance, endpoints: EndpointService, templates: TemplateService, workers: WorkerService, lbDomain?: string): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  /**
   * includeTemplate embeds the template; includeWorkers lists the workers as v1 pods with their state,
   * and `statusReason`: why the endpoint has fewer workers than it wants, or what they wait for.
   */
  async function view(p: Principal, e: EndpointRecord, inc: { includeTemplate?: boolean; includeWorkers?: boolean }, origin: string) {
    // requestUrls: on the origin the caller used (docs/gateway.md for load balancers)
    const v: ReturnType<typeof toEndpointView> & { requestUrls: RequestUrls; template?: unknown; workers?: unknown[]; statusReason?: string | null } = {
      ...toEndpointView(e),
      requestUrls: endpointRequestUrls(e, origin, lbDomain),
    };
    if (inc.includeTemplate) v.template = await templates.get(p, e.templateId).then(toTemplateView, (err: unknown) => {
      if (isGpufleetError(err) && err.code === 'NOT_FOUND') return null; // a public template made private since
      throw err;
    });
    if (inc.includeWorkers) {
      v.workers = await workers.podViews(e);
      v.statusReason = (await workers.status(e.id)).reason;
    }
    return v;
  }

  /** create and update answers: `warnings` names each GPU type no enrolled host has (accepted all the same) */
  async function withWarnings<V extends object>(e: EndpointRecord, v: V): Promise<V & { warnings?: string[] }> {
    const warnings = await workers.gpuTypeWarnings(e);
    return warnings.length ? { ...v, warnings } : v;
  }

  app.post(
    '/v1/endpoints',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Create a serverless endpoint', body: docSchema(endpointCreateSchema), response: { 200: endpointViewSchema, ...errorResponses(400, 401, 403, 422, 429) } },
    },
    async (request) => {
      const p = principalOf(request);
      const e = await endpoints.create(p, request.body);
      return withWarnings(e, await view(p, e, {}, originOf(request)));
    },
  );

  app.get(
    '/v1/endpoints',
    { config: { scope: 'read' }, schema: { tags, summary: 'List serverless endpoints (a bare array, as in v1)', querystring: listQuerySchema(LIST), response: { 200: { type: 'array', items: endpointViewSchema }, ...errorResponses(401, 422, 429) } } },
    async (request) => {
      const p = principalOf(request);
      const { includeTemplate, includeWorkers, ...filter } = parseListQuery(request.query, LIST);
      const inc = { includeTemplate, includeWorkers };
      return Promise.all((await endpoints.list(p, filter)).map((e) => view(p, e, inc, originOf(request))));
    },
  );

  app.get(
    '/v1/endpoints/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'Get a serverless endpoint', params: idParams, querystring: listQuerySchema(INCLUDE), response: { 200: endpointViewSchema, ...errorResponses(401, 403, 404, 422, 429) } } },
    async (request) => {
      const p = principalOf(request);
      const inc = parseListQuery(request.query, INCLUDE);
      return view(p, await endpoints.get(p, request.params.id), inc, originOf(request));
    },
  );

  const update = async (request: FastifyRequest, id: string, body: unknown) => {
    const e = await endpoints.update(principalOf(request), id, body);
    return withWarnings(e, await view(principalOf(request), e, {}, originOf(request)));
  };
  const updateSchema = {
    tags,
    summary: 'Update a serverless endpoint (only the fields sent change)',
    params: idParams,
    body: docSchema(endpointUpdateSchema),
    response: { 200: endpointViewSchema, ...errorResponses(400, 401, 403, 404, 422, 429) },
  };
  app.patch('/v1/endpoints/:id', { config: { scope: 'read_write' }, schema: updateSchema }, async (request) =>
    update(request, request.params.id, request.body),
  );
  app.post(
    '/v1/endpoints/:id/update',
    { config: { scope: 'read_write' }, schema: { ...updateSchema, summary: 'Update a serverless endpoint (v1 alias of PATCH)' } },
    async (request) => update(request, request.params.id, request.body),
  );

  app.delete(
    '/v1/endpoints/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Delete a serverless endpoint', params: idParams, response: errorResponses(401, 403, 404, 429) } },
    async (request, reply) => {
      await endpoints.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
