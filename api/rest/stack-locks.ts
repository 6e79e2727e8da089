// Stack locks: one `gpufleet apply|destroy|import` of a stack at a time, per account. The lock is a
// lease (expiresAt) so a crashed apply cannot hold a stack forever; the holder renews by acquiring
// again, and releases with DELETE (force=true breaks someone else's lock, like `terraform force-unlock`).
import type { FastifyInstance } from 'fastify';
import { GpufleetError } from '../../model/index.ts';
import type { StackLockRecord } from '../../model/index.ts';
import { check, compile } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import type { Store } from '../../store/index.ts';
import { errorResponses } from './route-schema.ts';

const DEFAULT_TTL_SECONDS = 900;

const acquireSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['holder'],
  properties: {
    holder: { type: 'string', minLength: 1, maxLength: 256, description: 'who holds it: user@host, pid, operation' },
    ttlSeconds: { type: 'integer', minimum: 1, maximum: 86400, description: `lease length, default ${DEFAULT_TTL_SECONDS}` },
  },
} as const;
const validateAcquire = compile<{ holder: string; ttlSeconds?: number }>(acquireSchema);

const params = {
  type: 'object',
  required: ['stack'],
  properties: { stack: { type: 'string', minLength: 1, maxLength: 191 } },
} as const;
const lockView = {
  type: 'object',
  properties: { stack: { type: 'string' }, holder: { type: 'string' }, acquiredAt: { type: 'string' }, expiresAt: { type: 'string' } },
} as const;
const tags = ['stack-locks'];

/** one lock per account and stack name: two accounts may both have a stack called "prod" */
const lockId = (accountId: string, stack: string) => `${accountId}:${stack}`;

function view(stack: string, l: StackLockRecord) {
  return { stack, holder: l.holder, acquiredAt: l.acquiredAt, expiresAt: l.expiresAt };
}

function lockedError(stack: string, l: StackLockRecord, hint: string): GpufleetError {
  return new GpufleetError('LOCKED', `Stack "${stack}" is locked by ${l.holder} since ${l.acquiredAt} (until ${l.expiresAt}); ${hint}`, {
    fields: { holder: l.holder, acquiredAt: l.acquiredAt, expiresAt: l.expiresAt },
  });
}

export function stackLockRoutes(app: FastifyInstance, store: Store): void {
  app.post(
    '/v2/stack-locks/:stack',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Acquire (or renew) a stack lock', params, body: acquireSchema, response: { 200: lockView, ...errorResponses(401, 403, 409, 422, 429) } },
    },
    async (request) => {
      const { stack } = request.params as { stack: string };
      const body = check(validateAcquire, request.body ?? {}, 'stack lock');
      const id = lockId(principalOf(request).accountId, stack);
      return store.transact(async (tx) => {
        const now = new Date();
        const held = await tx.get('stackLocks', id);
        if (held && held.holder !== body.holder && Date.parse(held.expiresAt) > now.getTime())
          throw lockedError(stack, held, 'wait for it to finish, or break the lock with `gpufleet force-unlock`.');
        const lock: StackLockRecord = {
          id,
          holder: body.holder,
          acquiredAt: held?.holder === body.holder ? held.acquiredAt : now.toISOString(),
          expiresAt: new Date(now.getTime() + (body.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000).toISOString(),
        };
        tx.put('stackLocks', lock);
        return view(stack, lock);
      });
    },
  );

  app.get(
    '/v2/stack-locks/:stack',
    { config: { scope: 'read' }, schema: { tags, summary: 'Who holds a stack lock', params, response: { 200: lockView, ...errorResponses(401, 404, 429) } } },
    async (request) => {
      const { stack } = request.params as { stack: string };
      const held = await store.get('stackLocks', lockId(principalOf(request).accountId, stack));
      if (!held || Date.parse(held.expiresAt) <= Date.now()) throw new GpufleetError('NOT_FOUND', `Stack "${stack}" is not locked.`);
      return view(stack, held);
    },
  );

  app.delete(
    '/v2/stack-locks/:stack',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Release a stack lock',
        params,
        querystring: { type: 'object', properties: { holder: { type: 'string' }, force: { type: 'boolean' } } },
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const { stack } = request.params as { stack: string };
      const q = request.query as { holder?: string; force?: string };
      const id = lockId(principalOf(request).accountId, stack);
      await store.transact(async (tx) => {
        const held = await tx.get('stackLocks', id);
        if (!held) return;
        const expired = Date.parse(held.expiresAt) <= Date.now();
        if (!expired && q.force !== 'true' && q.holder !== held.holder)
          throw lockedError(stack, held, 'only its holder may release it (or pass force=true).');
        tx.delete('stackLocks', id);
      });
      return reply.code(204).send();
    },
  );
}
