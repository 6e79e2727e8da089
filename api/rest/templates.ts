// v2 templates: GET/POST /v2/templates, GET/PATCH/DELETE /v2/templates/{id} (docs/templates.md).
import type { FastifyInstance } from 'fastify';
import { templateCreateSchema, templateUpdateSchema, templateViewSchema } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { toTemplateView, type TemplateService } from '../../core/index.ts';
import { listQuerySchema, parseListQuery } from './list-query.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

const tags = ['templates'];
const LIST = { strings: ['name'], booleans: ['includePublic'], tag: true } as const;

export function templateRoutes(fastify: FastifyInstance, templates: TemplateService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/templates',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Create a template', body: docSchema(templateCreateSchema), response: { 201: templateViewSchema, ...errorResponses(400, 401, 403, 409, 422, 429) } },
    },
    async (request, reply) => reply.code(201).send(toTemplateView(await templates.create(principalOf(request), request.body))),
  );

  app.get(
    '/v2/templates',
    { config: { scope: 'read' }, schema: { tags, summary: 'List templates', querystring: listQuerySchema(LIST), response: { 200: { type: 'object', properties: { templates: { type: 'array', items: templateViewSchema } } }, ...errorResponses(401, 422, 429) } } },
    async (request) => {
      const f = parseListQuery(request.query, LIST);
      return { templates: (await templates.list(principalOf(request), f)).map(toTemplateView) };
    },
  );

  app.get(
    '/v2/templates/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'Get a template', params: idParams, response: { 200: templateViewSchema, ...errorResponses(401, 403, 404, 429) } } },
    async (request) => toTemplateView(await templates.get(principalOf(request), request.params.id)),
  );

  app.patch(
    '/v2/templates/:id',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Update a template', params: idParams, body: docSchema(templateUpdateSchema), response: { 200: templateViewSchema, ...errorResponses(400, 401, 403, 404, 409, 422, 429) } },
    },
    async (request) => toTemplateView(await templates.update(principalOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v2/templates/:id',
    { config: { scope: 'read_write' }, schema: { tags, summary: 'Delete a template', params: idParams, response: errorResponses(401, 403, 404, 409, 429) } },
    async (request, reply) => {
      await templates.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
