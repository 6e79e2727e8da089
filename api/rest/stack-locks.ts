// Stack locks over HTTP (POST, GET, DELETE /v2/stack-locks/{stack}); what a lock is and who may
// release it is core/stacks/stack-lock-service.ts.
import type { FastifyInstance } from 'fastify';
import { stackLockAcquireSchema } from '../../model/index.ts';
import type { StackLockService } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { docSchema, errorResponses, queryByHand, queryFlag, type RestTypeProvider } from './route-schema.ts';

const params = {
  type: 'object',
  required: ['stack'],
  // a name no lock has answers as the service does: no length refusal here
  properties: { stack: { type: 'string', description: '1 to 191 characters' } },
} as const;
const lockView = {
  type: 'object',
  properties: { stack: { type: 'string' }, holder: { type: 'string' }, acquiredAt: { type: 'string' }, expiresAt: { type: 'string' } },
} as const;
/** read as sent (only force=true forces; the service compares holder) */
const releaseQuery = queryByHand({
  type: 'object',
  properties: { holder: { type: 'string' }, force: queryFlag('break a lock someone else holds, like `terraform force-unlock`') },
});
const tags = ['stack-locks'];

export function stackLockRoutes(fastify: FastifyInstance, locks: StackLockService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/stack-locks/:stack',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Acquire (or renew) a stack lock',
        params,
        body: docSchema(stackLockAcquireSchema),
        response: { 200: lockView, ...errorResponses(401, 403, 409, 422, 429) },
      },
    },
    async (request) => locks.acquire(principalOf(request), request.params.stack, request.body),
  );

  app.get(
    '/v2/stack-locks/:stack',
    { config: { scope: 'read' }, schema: { tags, summary: 'Who holds a stack lock', params, response: { 200: lockView, ...errorResponses(401, 404, 429) } } },
    async (request) => locks.get(principalOf(request), request.params.stack),
  );

  app.delete(
    '/v2/stack-locks/:stack',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Release a stack lock', params, querystring: releaseQuery, response: { 204: { type: 'null' }, ...errorResponses(401, 403, 409, 429) } },
    },
    async (request, reply) => {
      const { holder, force } = request.query;
      // a repeated holder matches no holder, as before
      await locks.release(principalOf(request), request.params.stack, { holder: typeof holder === 'string' ? holder : undefined, force: force === 'true' });
      return reply.code(204).send();
    },
  );
}
