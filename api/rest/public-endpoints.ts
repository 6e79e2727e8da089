// The public model catalog over HTTP (docs/public-endpoints.md): operators publish and withdraw,
// every account reads. Calling a model is the job interface with the slug (api/jobs/).
import type { FastifyInstance } from 'fastify';
import { publicEndpointCreateSchema } from '../../model/index.ts';
import type { PublicEndpointCatalog } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { docSchema, errorResponses, type RestTypeProvider } from './route-schema.ts';

// a slug no model has is the catalog's 404, whatever its length: no length refusal here
const params = { type: 'object', required: ['slug'], properties: { slug: { type: 'string', description: '1 to 64 characters' } } } as const;
const entryView = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    pricing: { type: 'object', properties: { unit: { type: 'string' }, usdPerUnit: { type: 'number' }, maxUnitsPerJob: { type: 'number' } } },
    createdAt: { type: 'string' },
    endpointId: { type: 'string', description: 'operators only' },
  },
} as const;
const tags = ['public-endpoints'];

/**
 * The route names of this API, collected from the route table as routes are added: the first static
 * segment under each version (`/v2/pods`, `/v2/billing`, `/v2/media`, `/v1/endpoints`, …) and each
 * top-level one (`graphql`, `healthz`, …). Slugs may not take them. Call before the routes are
 * registered.
 */
export function routeNames(app: FastifyInstance): () => Iterable<string> {
  const names = new Set<string>();
  const isStatic = (seg: string | undefined): seg is string => seg !== undefined && seg !== '' && !seg.startsWith(':') && !seg.includes('*');
  app.addHook('onRoute', (r) => {
    const [first, second] = r.url.split('/').slice(1);
    if (isStatic(first)) names.add(first);
    if (first !== undefined && /^v\d+$/.test(first) && isStatic(second)) names.add(second);
  });
  return () => names;
}

export function publicEndpointRoutes(fastify: FastifyInstance, catalog: PublicEndpointCatalog): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/public-endpoints',
    {
      config: { scope: 'admin', operator: true },
      schema: { tags, summary: 'Publish a model (operator)', body: docSchema(publicEndpointCreateSchema), response: { 201: entryView, ...errorResponses(400, 401, 403, 404, 409, 422, 429) } },
    },
    async (request, reply) => reply.code(201).send(await catalog.create(principalOf(request), request.body)),
  );
  app.get(
    '/v2/public-endpoints',
    { config: { scope: 'read' }, schema: { tags, summary: 'The public model catalog', response: { 200: { type: 'array', items: entryView }, ...errorResponses(401, 429) } } },
    async (request) => catalog.list(principalOf(request)),
  );
  app.get(
    '/v2/public-endpoints/:slug',
    { config: { scope: 'read' }, schema: { tags, summary: 'One model of the catalog', params, response: { 200: entryView, ...errorResponses(401, 404, 429) } } },
    async (request) => catalog.get(principalOf(request), request.params.slug),
  );
  app.delete(
    '/v2/public-endpoints/:slug',
    {
      config: { scope: 'admin', operator: true },
      schema: { tags, summary: 'Withdraw a model (operator)', params, response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) } },
    },
    async (request, reply) => {
      await catalog.delete(principalOf(request), request.params.slug);
      return reply.code(204).send();
    },
  );
}
