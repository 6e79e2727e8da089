// Long-held requests per account (core/fair-share/held-requests.ts, docs/security.md "Stream
// shares"): a route whose config names a `held` kind takes one of the caller's requests of that kind
// once the guard has let it in, and gives it back when its connection is done with it: when the
// reply closes (an SSE stream, a long poll), or the socket does (an upgraded WebSocket). Over the
// account's limit the request is 429 HELD_REQUESTS with Retry-After, before the route runs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HeldRequestKind, HeldRequests } from '../../core/index.ts';
import { principalOf } from './request-guard.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the request may be held open (events, waits, logs, exec); a function decides per request (null: not held) */
    held?: HeldRequestKind | ((request: FastifyRequest) => HeldRequestKind | null);
  }
}

export function registerHeldRequests(app: FastifyInstance, held: HeldRequests): void {
  app.addHook('preHandler', async (request, reply) => {
    const config = request.routeOptions.config.held;
    const kind = typeof config === 'function' ? config(request) : config;
    if (!kind) return;
    const release = held.acquire(principalOf(request).accountId, kind);
    if (request.ws) request.raw.socket.once('close', release);
    else reply.raw.once('close', release);
  });
}
