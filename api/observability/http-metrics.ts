// gpufleet_http_requests_total and gpufleet_http_request_duration_seconds for every request,
// labelled with the route pattern that matched (`/v2/pods/:id`), never the URL: ids and junk targets
// would make a series each. Counted when the response closes, so a stream that the client ends
// (pod logs, events) is counted too, with its whole duration.
import type { FastifyInstance } from 'fastify';
import { UNMATCHED_ROUTE, type Telemetry } from '../../core/index.ts';

/** Register before the request guard: a request it refuses is counted like any other. */
export function registerHttpMetrics(app: FastifyInstance, telemetry: Telemetry): void {
  app.addHook('onRequest', (request, reply, done) => {
    const started = performance.now();
    // `on`, not `once`: a response closes once, and once's wrapper is a closure more per request
    reply.raw.on('close', () => {
      const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
      telemetry.httpRequest({ method: request.method, route, status: reply.statusCode, seconds: (performance.now() - started) / 1000 });
    });
    done();
  });
}
