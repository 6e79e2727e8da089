// A request that came as an HTTP/1.1 upgrade (a WebSocket), as @fastify/websocket leaves it: its
// socket and the bytes after its head, for the gateway to send on (tunnel.ts) instead of completing
// the handshake itself. Shared by the load balancers' routes and pods' ports.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallerUpgrade } from './tunnel.ts';

/**
 * The caller's socket when the request came as an upgrade (Node's 'upgrade' event, which
 * @fastify/websocket routes through Fastify and marks `request.ws`), with the bytes that came after
 * its head (kept by that plugin under its 'ws-head' symbol; a client waits for the 101, so they are
 * almost always none).
 */
export function callerUpgrade(request: FastifyRequest): CallerUpgrade | null {
  // `request.ws` alone here: the plugin marks every upgrade that got this far (the symbol lookup of
  // cameAsUpgrade is for answers the guard gave before it did, and stays off the proxied path)
  const protocol = request.headers.upgrade;
  if (request.ws !== true || typeof protocol !== 'string' || !request.raw.socket) return null;
  const head = pluginSlot(request, 'ws-head');
  return { protocol, socket: request.raw.socket, head: Buffer.isBuffer(head) ? head : Buffer.alloc(0) };
}

/** The request came by Node's 'upgrade' event (@fastify/websocket keeps its socket under 'ws-socket'). */
export function cameAsUpgrade(request: FastifyRequest): boolean {
  return request.ws === true || pluginSlot(request, 'ws-socket') !== undefined;
}

function pluginSlot(request: FastifyRequest, name: string): unknown {
  const raw = request.raw as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(raw).find((k) => k.description === name);
  return key ? raw[key] : undefined;
}


/**
 * The onResponse hook of routes that send upgrades on: an upgrade answered here (refused by the
 * guard, 404, 503…) leaves a socket no HTTP server owns any more, so it ends with the answer (a
 * tunnel's answer is the far side's, and is hijacked).
 */
export function endAnsweredUpgrade(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (cameAsUpgrade(request)) request.raw.socket?.destroy();
  done();
}
