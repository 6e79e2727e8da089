// GET /v2/pods/{id}/logs: the pod's log as server-sent events (runpod-compat.md, "REST v2 … Pods";
// docs/pods.md, "Logs"). Each event's data is `{source, stream?, line, ts}` and its id resumes the
// stream as Last-Event-ID. Reading the container's output on its host is core's and the
// provisioner's (core/pods/logs); this file parses the request and writes the events.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parsePodLogQuery, type PodLogQuery, type PodLogService, type PodLogStream } from '../../core/index.ts';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { toProblem } from '../errors/problem.ts';
import { errorResponses, idParams, queryByHand, type RestTypeProvider } from './route-schema.ts';
import { openSse } from './sse.ts';

/** the query of a log stream: pods' and serverless workers' (api/serverless/worker-logs.ts) */
/** parsePodLogQuery is the check (its messages are the answers) */
export const podLogQuerystring = queryByHand({
  type: 'object',
  properties: {
    tail: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'lines before the live ones, 0 to 5000 (default 100); ignored with since or Last-Event-ID' },
    since: { type: 'string', format: 'date-time', description: 'RFC 3339: the log from then on; ignored with Last-Event-ID' },
    source: { type: 'string', enum: ['container', 'system'], description: "container: the container's stdout and stderr; system: the pod's events. Both when omitted" },
    follow: { type: 'string', enum: ['true', 'false'], description: 'false: the entries there are now, then `event: end` (as `docker logs` without --follow); default true' },
  },
});

export const lastEventIdHeaders = {
  type: 'object',
  properties: { 'last-event-id': { type: 'string', description: 'resume after this event (EventSource sends it on reconnect)' } },
} as const;

export function podLogRoutes(fastify: FastifyInstance, podLogs: PodLogService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/pods/:id/logs',
    {
      config: { scope: 'read', held: 'logs' },
      // a HEAD would start a follow whose output nobody reads, until the container stops
      exposeHeadRoute: false,
      schema: {
        tags: ['pods'],
        summary: "Stream a pod's logs (server-sent events)",
        params: idParams,
        querystring: podLogQuerystring,
        headers: lastEventIdHeaders,
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      // every refusal (404, 409, 503) comes before the 200 and the first event
      const stream = await podLogs.open(principalOf(request), id, logQueryOf(request.query, request.headers['last-event-id']));
      return streamLog(request, reply, stream, { podId: id });
    },
  );
}

export function logQueryOf(query: Record<string, unknown>, lastEventId: string | string[] | undefined): PodLogQuery {
  return parsePodLogQuery(query, lastEventId);
}

/** Writes an opened log stream as server-sent events until it ends or the client goes. */
export function streamLog(request: FastifyRequest, reply: FastifyReply, stream: PodLogStream, logFields: Record<string, string>): FastifyReply {
  const sse = openSse(reply);
  sse.onClose(() => stream.close());
  void (async () => {
    try {
      for await (const e of stream.entries) {
        const data = e.stream ? { source: e.source, stream: e.stream, line: e.line, ts: e.ts } : { source: e.source, line: e.line, ts: e.ts };
        if (!(await sse.send(data, { id: e.id }))) return;
      }
      // the log ended (the container stopped): a client that reconnects would get nothing new
      await sse.send({ reason: 'the log ended' }, { event: 'end' });
    } catch (err) {
      const problem = isGpufleetError(err) ? err : new GpufleetError('INTERNAL', 'Reading the log failed; it has been logged.', { cause: err });
      if (problem.status >= 500) request.log.warn({ err, ...logFields }, 'pod log stream failed');
      await sse.send(toProblem(problem), { event: 'problem' }).catch(() => false);
    } finally {
      sse.end();
      stream.close();
    }
  })();
  return reply;
}
