// POST /graphql (Mercurius). The route carries `scope: 'read'`, so the request guard rate-limits it and
// checks the key (Bearer header, or ?api_key= which this route alone accepts, spec 5.3) like any REST
// route; mutations check read_write in resolvers.ts. Once the document is read and valid, the request
// costs one rate-limit unit per top-level field (operationCost) before anything runs. HTTP status:
// 401/403/429/4xx for the request itself (bad key, rate limit, body that is not a GraphQL request);
// otherwise every answer is 200 with `errors[]` (what the public clients expect: runpodctl treats any
// non-200 as a transport failure). GET is not served.
import type { FastifyError, FastifyInstance } from 'fastify';
import mercurius, { type IResolvers } from 'mercurius';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { chargeTotal } from '../rate-limit/request-charge.ts';
import { fromFastifyError } from '../errors/problem.ts';
import type { Services } from '../../core/index.ts';
import { newContext, type GqlContext } from './context.ts';
import { documentErrors, formatExecutionError, fromGpufleetError } from './errors.ts';
import { aliasLimit, depthLimit, MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, operationCost } from './limits.ts';
import { buildResolvers } from './resolvers.ts';
import { typeDefs } from './schema.ts';

export interface GraphqlPluginOptions {
  services: Services;
}

interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each field read once and narrowed (undefined: present but wrong); no cast of the body. */
function readRequest(body: unknown): GraphqlRequest {
  if (!isObject(body)) throw new GpufleetError('BAD_REQUEST', 'Send a JSON object {"query": "...", "variables": {...}}; batched arrays are not supported.');
  const { query: q, variables: v, operationName: o } = body;
  const query = typeof q === 'string' && q.trim() !== '' ? q : undefined;
  const variables = v === undefined || v === null ? null : isObject(v) ? v : undefined;
  const operationName = o === undefined || o === null ? null : typeof o === 'string' ? o : undefined;
  if (query === undefined || variables === undefined || operationName === undefined) {
    const errors = [
      ...(query === undefined ? ['$.query: must be a non-empty string'] : []),
      ...(variables === undefined ? ['$.variables: must be an object'] : []),
      ...(operationName === undefined ? ['$.operationName: must be a string'] : []),
    ];
    throw new GpufleetError('BAD_REQUEST', `Not a GraphQL request: ${errors.join('; ')}`, { errors });
  }
  return { query, variables, operationName };
}

export async function graphqlPlugin(app: FastifyInstance, opts: GraphqlPluginOptions): Promise<void> {
  const { services } = opts;
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: buildResolvers() as unknown as IResolvers,
    // our own route below: the guard's scope config, our error shapes, no GET
    routes: false,
    // a document seen before runs as compiled code (graphql-jit); the first run validates and caches it
    jit: 1,
    validationRules: [depthLimit(MAX_DEPTH), aliasLimit(MAX_ALIASES)],
    graphql: { parseOptions: { maxTokens: MAX_TOKENS } },
    errorFormatter: (execution, context) => ({
      statusCode: 200,
      response: { data: execution.data ?? null, errors: execution.errors.map((e) => formatExecutionError(e, context.reply?.log ?? app.log)) },
    }),
  });

  // the document is parsed and valid (or came from mercurius' cache): charge its cost before it runs
  app.graphql.addHook('preExecution', async (_schema, document, context) => {
    const ctx = context as unknown as GqlContext;
    if (ctx.reply) await chargeTotal(ctx.reply.request, ctx.reply, operationCost(document, ctx.operationName));
  });

  // errors before the document runs (guard, body, cost): GraphQL-shaped, with the registry's HTTP status
  app.setErrorHandler((err: FastifyError | GpufleetError, request, reply) => {
    const e = isGpufleetError(err) ? err : fromFastifyError(err as FastifyError);
    if (e.status >= 500) request.log.error({ err, code: e.code }, 'graphql request failed');
    for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
    return reply.code(e.status).type('application/json').send({ errors: [fromGpufleetError(e)] });
  });

  app.post('/graphql', { config: { scope: 'read', apiKeyInQuery: true } }, async (request, reply) => {
    const { query, variables, operationName } = readRequest(request.body);
    const context = newContext(principalOf(request), services, operationName ?? undefined);
    try {
      return await reply.graphql(query, context, variables ?? undefined, operationName ?? undefined);
    } catch (e) {
      const errors = documentErrors(e);
      if (!errors) throw e;
      return reply.code(200).send({ errors });
    }
  });
}
