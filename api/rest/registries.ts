// v2 container registry credentials: GET/POST /v2/registries, GET/PATCH/DELETE /v2/registries/{id}.
// Responses are `{id, name}` only: the password goes in and never comes back out.
import type { FastifyInstance } from 'fastify';
import { registryCreateSchema, registryUpdateSchema } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import type { RegistryService } from '../../core/index.ts';
import { parseListQuery } from './list-query.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

const tags = ['registries'];
const view = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } } as const;

export function registryRoutes(fastify: FastifyInstance, registries: RegistryService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/registries',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Save registry credentials', body: docSchema(registryCreateSchema), response: { 201: view, ...errorResponses(401, 403, 409, 422, 429) } },
    },
    async (request, reply) => reply.code(201).send(await registries.create(principalOf(request), request.body)),
  );

  app.get(
    '/v2/registries',
    { config: { scope: 'read' }, schema: { tags, summary: 'List registry credentials (never the passwords)', response: { 200: { type: 'object', properties: { registries: { type: 'array', items: view } } }, ...errorResponses(401, 422, 429) } } },
    async (request) => {
      parseListQuery(request.query, {});
      return { registries: await registries.list(principalOf(request)) };
    },
  );

  app.get(
    '/v2/registries/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'Get registry credentials (id and name)', params: idParams, response: { 200: view, ...errorResponses(401, 403, 404, 429) } } },
    async (request) => registries.get(principalOf(request), request.params.id),
  );

  app.patch(
    '/v2/registries/:id',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Rotate the username or password', params: idParams, body: docSchema(registryUpdateSchema), response: { 200: view, ...errorResponses(401, 403, 404, 422, 429) } },
    },
    async (request) => registries.update(principalOf(request), request.params.id, request.body),
  );

  app.delete(
    '/v2/registries/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Delete registry credentials', params: idParams, response: errorResponses(401, 403, 404, 409, 429) } },
    async (request, reply) => {
      await registries.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
