// Long-held requests per account (core/fair-share/held-requests.ts, docs/security.md "Stream
// shares"): a route whose config names a `held` kind takes one of the caller's requests of that kind
// once the guard has let it in, and gives it back when its connection is done with it: when the
// reply closes (an SSE stream, a long poll), or the socket does (an upgraded WebSocket). Over the
// account's limit the request is 429 HELD_REQUESTS with Retry-After, before the route runs.
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, RouteOptions } from 'fastify';
import type { HeldRequestKind, HeldRequests } from '../../core/index.ts';
import { principalOf } from './request-guard.ts';
import { routeHooks } from './route-hooks.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the request may be held open (events, waits, logs, exec); a function decides per request (null: not held) */
    held?: HeldRequestKind | ((request: FastifyRequest) => HeldRequestKind | null);
  }
}

/**
 * The hook goes on the routes whose config names `held` only, first among their preHandlers (where
 * an instance-wide preHandler would run): every other request skips it.
 */
export function registerHeldRequests(app: FastifyInstance, held: HeldRequests): void {
  const hook: preHandlerAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config.held;
    const kind = typeof config === 'function' ? config(request) : config;
    if (!kind) return;
    const release = held.acquire(principalOf(request).accountId, kind);
    if (request.ws) request.raw.socket.once('close', release);
    else reply.raw.once('close', release);
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.held === undefined) return;
    route.preHandler = [hook, ...routeHooks(route.preHandler)];
  });
}
