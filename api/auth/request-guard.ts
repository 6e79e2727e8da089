// Every API request passes here first: it is counted against the caller's rate-limit windows (the
// headers go on successes and errors alike), then the key is checked against the route's scope.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '../../model/account.ts';
import { GpufleetError } from '../../model/errors.ts';
import { rateLimitError, type RateLimiter } from '../rate-limit/limiter.ts';
import { rateLimitHeaders } from '../rate-limit/headers.ts';
import { hasScope, type ApiKeys, type Principal } from './api-keys.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** scope the route needs; routes without one are public (docs, health) */
    scope?: ApiKeyScope;
    /** the route is served to operator accounts only (fleet, accounts) */
    operator?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const LIMITED = /^\/(v1|v2)\/|^\/graphql(\?|$)/;

export function registerRequestGuard(app: FastifyInstance, keys: ApiKeys, limiter: RateLimiter): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (!LIMITED.test(request.url)) return;
    const queryKey = apiKeyFromQuery(request);
    let principal: Principal | null = null;
    let authError: unknown = null;
    try {
      principal = await keys.authenticate(request.headers.authorization, queryKey);
    } catch (e) {
      authError = e;
    }
    // limit per account; a caller without a valid key is limited per address
    const subject = principal ? `acct:${principal.accountId}` : `anon:${anonSubject(request)}`;
    const { windows, exceeded } = limiter.consume(subject);
    const headers = rateLimitHeaders(windows);
    reply.headers(headers);
    if (exceeded.length > 0) throw rateLimitError(exceeded, headers);
    // unknown routes are answered 404/405 by the not-found handler; public ones (docs) need no key
    if (request.routeOptions.url === undefined || !config.scope) return;
    if (!principal) throw authError;
    if (!hasScope(principal, config.scope!))
      throw new GpufleetError('FORBIDDEN', `This API key has the ${principal.scope} scope; ${request.method} ${request.routeOptions.url} needs ${config.scope}.`);
    if (config.operator && !principal.operator)
      throw new GpufleetError('FORBIDDEN', 'Only operator accounts may manage the fleet and other accounts.');
    request.principal = principal;
  });
}

function apiKeyFromQuery(request: FastifyRequest): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  return typeof q?.api_key === 'string' ? q.api_key : undefined;
}

/** per address: keying on the presented (invalid) key would let a caller rotate garbage keys */
function anonSubject(request: FastifyRequest): string {
  return request.ip;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new GpufleetError('UNAUTHENTICATED', 'An API key is required.');
  return request.principal;
}
