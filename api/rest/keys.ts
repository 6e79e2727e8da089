// API keys (admin scope) and accounts (operators). docs/auth.md describes the model.
import type { FastifyInstance } from 'fastify';
import { GpufleetError } from '../../model/index.ts';
import { accountCreateSchema, accountViewSchema, apiKeyViewSchema, keyCreateSchema, type AccountCreateInput, type KeyCreateInput } from '../../model/index.ts';
import { check, compile } from '../../model/index.ts';
import { keyView, type ApiKeys } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import type { Store } from '../../store/index.ts';
import { spendable } from '../../core/index.ts';
import { docSchema, errorResponses, idParams, queryByHand, type RestTypeProvider } from './route-schema.ts';

const validateKey = compile<KeyCreateInput>(keyCreateSchema);
const validateAccount = compile<AccountCreateInput>(accountCreateSchema);
/** read as sent: a repeated accountId counts as none */
const keyListQuery = queryByHand({
  type: 'object',
  properties: { accountId: { type: 'string', description: "operators only: another account's keys" } },
});

export function keyRoutes(fastify: FastifyInstance, keys: ApiKeys, store: Store): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/keys',
    { config: { scope: 'admin' }, schema: { tags: ['keys'], summary: 'Create an API key (shown once)', body: docSchema(keyCreateSchema), response: { 201: apiKeyViewSchema, ...errorResponses(401, 403, 404, 422, 429) } } },
    async (request, reply) => {
      const p = principalOf(request);
      const input = check(validateKey, request.body, 'API key');
      const accountId = input.accountId ?? p.accountId;
      if (accountId !== p.accountId && !p.operator)
        throw new GpufleetError('FORBIDDEN', 'Only operators may create keys for other accounts.');
      if (input.expiresAt && Date.parse(input.expiresAt) <= Date.now())
        throw new GpufleetError('VALIDATION_FAILED', 'expiresAt is in the past.', { errors: ['$.expiresAt: must be in the future'] });
      const { key, record } = await keys.createKey({ accountId, name: input.name, scope: input.scope, expiresAt: input.expiresAt ?? null });
      return reply.code(201).send({ ...keyView(record), key });
    },
  );

  app.get(
    '/v2/keys',
    { config: { scope: 'admin' }, schema: { tags: ['keys'], summary: 'List API keys (never the secrets)', querystring: keyListQuery, response: { 200: { type: 'object', properties: { keys: { type: 'array', items: apiKeyViewSchema } } } } } },
    async (request) => {
      const p = principalOf(request);
      // a repeated parameter arrives as an array (nothing validates the query): only one string counts
      const asked = request.query.accountId;
      const accountId = p.operator && typeof asked === 'string' ? asked : p.accountId;
      return { keys: (await store.list('apiKeys', { accountId })).map(keyView) };
    },
  );

  app.delete(
    '/v2/keys/:id',
    { config: { scope: 'admin' }, schema: { tags: ['keys'], summary: 'Revoke an API key', params: idParams, response: { 200: apiKeyViewSchema } } },
    async (request) => keyView(await keys.revoke(request.params.id, principalOf(request))),
  );

  app.post(
    '/v2/accounts',
    { config: { scope: 'admin', operator: true }, schema: { tags: ['accounts'], summary: 'Create an account', body: docSchema(accountCreateSchema), response: { 201: accountViewSchema } } },
    async (request, reply) => {
      const input = check(validateAccount, request.body, 'account');
      return reply.code(201).send(await keys.createAccount(input));
    },
  );

  app.get(
    '/v2/accounts',
    { config: { scope: 'admin', operator: true }, schema: { tags: ['accounts'], summary: 'List accounts', response: { 200: { type: 'object', properties: { accounts: { type: 'array', items: accountViewSchema } } } } } },
    async () => ({ accounts: await store.list('accounts') }),
  );

  app.get(
    '/v2/account',
    { config: { scope: 'read' }, schema: { tags: ['accounts'], summary: 'The caller\'s account, with its balance', response: { 200: accountViewSchema } } },
    async (request) => {
      const p = principalOf(request);
      const account = await store.get('accounts', p.accountId);
      // open credit holds of accepted public model jobs count as spent (docs/security.md)
      const s = await spendable(store, p.accountId, Date.now());
      return { ...account, usage: round(s.usage), held: round(s.held), clientBalance: round(s.left) };
    },
  );
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
