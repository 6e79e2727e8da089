// Requests that came through a host's worker relay (api/jobs/worker-relay-server.ts, docs/serverless.md
// "Reaching the control plane"): which host carried each, and the gate that lets only the worker
// protocol routes answer them. The request guard reads relayHostOf to refuse a worker of another host.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { GpufleetError } from '../../model/index.ts';

const relayed = new WeakMap<IncomingMessage, string>();
const onProven = new WeakMap<IncomingMessage, () => void>();

export const RELAY_ONLY_WORKER_ROUTES = 'Through the worker relay only the worker protocol is served.';

/**
 * marks a request as carried by `hostId`'s relay (the relay server, before routing); `proven` is
 * called once the request guard has accepted a worker token of that host on it
 */
export function markRelayed(raw: IncomingMessage, hostId: string, proven?: () => void): void {
  relayed.set(raw, hostId);
  if (proven) onProven.set(raw, proven);
}

/** the request guard: this relayed request carried a worker token of the relay's own host */
export function relayedWorkerProven(raw: IncomingMessage): void {
  onProven.get(raw)?.();
  onProven.delete(raw);
}

/** the host whose relay carried this request, or undefined for a request on the API's own port */
export function relayHostOf(raw: IncomingMessage): string | undefined {
  return relayed.get(raw);
}

/** Registered before every other onRequest hook: through a relay, only worker protocol routes exist. */
export function relayGate(app: FastifyInstance): void {
  // a callback hook: every request passes it, and a promise per request costs
  app.addHook('onRequest', (request, _reply, done) => {
    if (relayed.has(request.raw) && (request.is404 || request.routeOptions.config.worker !== true)) done(new GpufleetError('ROUTE_NOT_FOUND', RELAY_ONLY_WORKER_ROUTES));
    else done();
  });
}
