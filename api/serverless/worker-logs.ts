// GET /v2/serverless/{id}/workers/{workerId}/logs: a serverless worker's log as server-sent events,
// exactly as GET /v2/pods/{id}/logs (same query, events, Last-Event-ID and refusals): a worker is a
// pod record with `endpointId`, so core's PodLogService reads it. Another account's endpoint, or a
// worker of another endpoint, is 404.
import type { FastifyInstance } from 'fastify';
import type { PodLogService } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { lastEventIdHeaders, logQueryOf, podLogQuerystring, streamLog } from '../rest/pod-logs.ts';
import { errorResponses, type RestTypeProvider } from '../rest/route-schema.ts';

const params = {
  type: 'object',
  required: ['id', 'workerId'],
  properties: { id: { type: 'string' }, workerId: { type: 'string' } },
} as const;

export function workerLogRoutes(fastify: FastifyInstance, podLogs: PodLogService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/serverless/:id/workers/:workerId/logs',
    {
      config: { scope: 'read', held: 'logs' },
      // a HEAD would start a follow whose output nobody reads
      exposeHeadRoute: false,
      schema: {
        tags: ['serverless'],
        summary: "Stream a serverless worker's logs (server-sent events, as a pod's)",
        params,
        querystring: podLogQuerystring,
        headers: lastEventIdHeaders,
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const { id, workerId } = request.params;
      // every refusal (404, 409, 503) comes before the 200 and the first event
      const stream = await podLogs.openWorker(principalOf(request), id, workerId, logQueryOf(request.query, request.headers['last-event-id']));
      return streamLog(request, reply, stream, { endpointId: id, workerId });
    },
  );
}
