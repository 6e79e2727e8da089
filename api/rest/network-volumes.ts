// v2 network volumes: GET/POST /v2/network-volumes, GET/PATCH/DELETE /v2/network-volumes/{id}.
import type { FastifyInstance } from 'fastify';
import { networkVolumeCreateSchema, networkVolumeUpdateSchema, networkVolumeViewSchema } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { toNetworkVolumeView, type NetworkVolumeService } from '../../core/index.ts';
import { listQuerySchema, parseListQuery } from './list-query.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

const tags = ['network-volumes'];
const LIST = { strings: ['name', 'dataCenterId'], tag: true } as const;

export function networkVolumeRoutes(fastify: FastifyInstance, volumes: NetworkVolumeService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/network-volumes',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Create a network volume', body: docSchema(networkVolumeCreateSchema), response: { 201: networkVolumeViewSchema, ...errorResponses(400, 401, 403, 422, 429) } },
    },
    async (request, reply) => reply.code(201).send(toNetworkVolumeView(await volumes.create(principalOf(request), request.body))),
  );

  app.get(
    '/v2/network-volumes',
    { config: { scope: 'read' }, schema: { tags, summary: 'List network volumes', querystring: listQuerySchema(LIST), response: { 200: { type: 'object', properties: { networkVolumes: { type: 'array', items: networkVolumeViewSchema } } }, ...errorResponses(401, 422, 429) } } },
    async (request) => {
      const f = parseListQuery(request.query, LIST);
      return { networkVolumes: (await volumes.list(principalOf(request), f)).map(toNetworkVolumeView) };
    },
  );

  app.get(
    '/v2/network-volumes/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'Get a network volume', params: idParams, response: { 200: networkVolumeViewSchema, ...errorResponses(401, 403, 404, 429) } } },
    async (request) => toNetworkVolumeView(await volumes.get(principalOf(request), request.params.id)),
  );

  app.patch(
    '/v2/network-volumes/:id',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Rename or grow a network volume',
        params: idParams,
        body: docSchema(networkVolumeUpdateSchema),
        response: { 200: networkVolumeViewSchema, ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => toNetworkVolumeView(await volumes.update(principalOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v2/network-volumes/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Delete a network volume', params: idParams, response: errorResponses(401, 403, 404, 409, 429) } },
    async (request, reply) => {
      await volumes.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
