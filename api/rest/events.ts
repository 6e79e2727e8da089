// GET /v2/events (docs/events.md): the status changes of the caller's pods and workers, and of the
// fleet's hosts for operators. JSON by default; with `Accept: text/event-stream` the events kept so
// far, then each new one as it happens, resumable with Last-Event-ID.
import type { FastifyInstance } from 'fastify';
import { EVENT_LIST_MAX_LIMIT, rfc3339Nanos, type EventQuery, type EventService } from '../../core/index.ts';
import { eventViewSchema, GpufleetError, toEventView, type FleetEvent } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { errorResponses, queryByHand, type RestTypeProvider } from './route-schema.ts';
import { openSse, type SseWriter } from './sse.ts';

const queryFields = {
  type: 'object',
  properties: {
    resourceId: { type: 'string', description: 'a pod, worker or host id (hosts: operators only)' },
    since: { type: 'string', format: 'date-time', description: 'RFC 3339: events at or after it' },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: `the newest n matching events, 1 to ${EVENT_LIST_MAX_LIMIT} (default 100)` },
  },
} as const;
/** parseEventQuery is the check (its messages are the answers) */
const querystring = queryByHand(queryFields);

export function parseEventQuery(q: Record<string, unknown>, lastEventId: string | string[] | undefined): EventQuery {
  const errors: string[] = [];
  const out: EventQuery = {};
  const one = (k: string): string | undefined => {
    const v = q[k];
    if (v === undefined || typeof v === 'string') return v;
    errors.push(`$.${k}: must be given once`);
    return undefined;
  };
  const resourceId = one('resourceId');
  if (resourceId !== undefined) out.resourceId = resourceId;
  const since = one('since');
  if (since !== undefined) {
    if (rfc3339Nanos(since) === null) errors.push('$.since: must be an RFC 3339 time, e.g. 2025-01-31T12:00:00Z');
    else out.since = since;
  }
  const limit = one('limit');
  if (limit !== undefined) {
    if (/^\d{1,4}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= EVENT_LIST_MAX_LIMIT) out.limit = Number(limit);
    else errors.push(`$.limit: must be an integer from 1 to ${EVENT_LIST_MAX_LIMIT}`);
  }
  for (const k of Object.keys(q)) if (!Object.hasOwn(queryFields.properties, k)) errors.push(`$.${k}: unknown query parameter`);
  if (typeof lastEventId === 'string') out.lastEventId = lastEventId.trim();
  else if (lastEventId !== undefined) errors.push('Last-Event-ID: must be given once');
  if (errors.length) throw new GpufleetError('VALIDATION_FAILED', `Invalid query: ${errors.join('; ')}`, { errors });
  return out;
}

export function eventRoutes(fastify: FastifyInstance, events: EventService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/events',
    {
      // followed live (server-sent events), it is one of the account's held event streams
      config: { scope: 'read', held: (request) => (String(request.headers.accept ?? '').includes('text/event-stream') ? 'events' : null) },
      // a HEAD with Accept: text/event-stream would hold a subscription nobody reads
      exposeHeadRoute: false,
      schema: {
        tags: ['events'],
        summary: 'List status-change events (Accept: text/event-stream follows them live)',
        querystring,
        response: { 200: { type: 'object', properties: { events: { type: 'array', items: eventViewSchema } } }, ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const q = parseEventQuery(request.query, request.headers['last-event-id']);
      if (!String(request.headers.accept ?? '').includes('text/event-stream')) {
        const { lastEventId: _ignored, ...listQuery } = q;
        return { events: (await events.list(principal, listQuery)).map(toEventView) };
      }
      // live: what is kept first, then each new event, in order (each send waits for the one before)
      let sse: SseWriter | null = null;
      let chain: Promise<unknown> = Promise.resolve();
      const early: FleetEvent[] = [];
      const send = (e: FleetEvent): void => {
        const view = toEventView(e);
        chain = chain.then(() => sse?.send(view, { id: view.id }));
      };
      // an event may come between the subscription and the stream's opening: it waits in `early`
      const follow = await events.follow(principal, q, (e) => (sse ? send(e) : early.push(e)));
      sse = openSse(reply);
      sse.onClose(() => follow.stop());
      for (const e of [...follow.backlog, ...early]) send(e);
      return reply;
    },
  );
}
