// Something served on the API's origin beside the API's own routes but built outside api/ (the
// load-balancing gateway, gateway/). It may claim a request before routing by rewriting its URL onto
// routes it registers; the request guard then authenticates those like any other route, from their
// config (docs/gateway.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../model/index.ts';

export interface MountContext {
  /** the caller the request guard authenticated (a route with a `scope`) */
  principalOf(request: FastifyRequest): Principal;
}

export interface OriginMount {
  /**
   * The URL to route this request to instead, or undefined to leave it to the API. Called for every
   * request before routing, so it must be cheap and synchronous. `host` is the Host header.
   */
  rewriteUrl(url: string, host: string | undefined): string | undefined;
  /** registers the mount's routes (and its onClose hooks) on the API's app */
  register(app: FastifyInstance, ctx: MountContext): Promise<void>;
}
