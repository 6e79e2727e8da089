// The job interface at `/v2/{endpointId}/…` (runpod-compat.md 2.1), thin over core's JobService:
// run, runsync, status, status-sync, stream, cancel, retry, purge-queue, health. The key may be sent
// as `Bearer <key>` or bare (the public docs' curl). Bodies: 10 MiB for run, 20 MiB for runsync.
// Every answer is 200 with the job's JSON, or problem+json. docs/jobs.md, "The job interface".
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jobHealthViewSchema, jobPurgeViewSchema, jobRunSchema, jobStreamViewSchema, jobViewSchema } from '../../model/index.ts';
import { parseStatusTtl, parseWait, type JobService } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { docSchema, errorResponses, queryByHand } from '../rest/route-schema.ts';
import { callerGone, param } from './request-signal.ts';

const MiB = 1 << 20;
export const RUN_BODY_LIMIT = 10 * MiB;
export const RUNSYNC_BODY_LIMIT = 20 * MiB;

const tags = ['jobs'];
const endpointParams = { type: 'object', required: ['endpointId'], properties: { endpointId: { type: 'string' } } } as const;
const jobParams = { type: 'object', required: ['endpointId', 'jobId'], properties: { endpointId: { type: 'string' }, jobId: { type: 'string' } } } as const;
// parseWait and parseStatusTtl are the checks (their messages are the answers)
const waitQuery = queryByHand({ type: 'object', properties: { wait: { type: 'integer', minimum: 1000, maximum: 300000, description: 'ms; default 90000' } } });
const ttlQuery = queryByHand({ type: 'object', properties: { ttl: { type: 'integer', minimum: 1000, maximum: 604800000, description: 'ms from now' } } });

const read = { scope: 'read', rawKey: true } as const;
const write = { scope: 'read_write', rawKey: true } as const;
/** runsync, status-sync and stream hold the request until the job ends: one of the account's held waits */
const readWait = { ...read, held: 'waits' } as const;
const writeWait = { ...write, held: 'waits' } as const;
const endpointOf = (r: FastifyRequest) => param(r.params, 'endpointId');
const jobOf = (r: FastifyRequest) => param(r.params, 'jobId');
const query = (r: FastifyRequest) => (r.query ?? {}) as Record<string, unknown>;

export function jobRoutes(app: FastifyInstance, jobs: JobService): void {
  const P = '/v2/:endpointId';
  // HEAD twins would run a stream read or a long poll and throw the answer away
  const common = { exposeHeadRoute: false } as const;

  app.post(
    `${P}/run`,
    {
      ...common,
      bodyLimit: RUN_BODY_LIMIT,
      config: write,
      schema: { tags, summary: 'Queue a job; answers {id, status} at once', params: endpointParams, body: docSchema(jobRunSchema), response: { 200: jobViewSchema, ...errorResponses(400, 401, 402, 403, 404, 413, 415, 422, 429) } },
    },
    async (request) => jobs.run(principalOf(request), endpointOf(request), request.body, { sync: false }),
  );

  app.post(
    `${P}/runsync`,
    {
      ...common,
      bodyLimit: RUNSYNC_BODY_LIMIT,
      config: writeWait,
      schema: {
        tags,
        summary: 'Queue a job and wait up to ?wait ms for it to end; past that, its id and current status',
        params: endpointParams,
        querystring: waitQuery,
        body: docSchema(jobRunSchema),
        response: { 200: jobViewSchema, ...errorResponses(400, 401, 402, 403, 404, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const waitMs = parseWait(query(request).wait);
      return jobs.run(principalOf(request), endpointOf(request), request.body, { sync: true, waitMs, signal: callerGone(reply) });
    },
  );

  app.get(
    `${P}/status/:jobId`,
    { ...common, config: { ...read, changesState: (r: FastifyRequest) => query(r).ttl !== undefined }, schema: { tags, summary: "A job's status (and output once final); ?ttl sets when it is dropped", params: jobParams, querystring: ttlQuery, response: { 200: jobViewSchema, ...errorResponses(400, 401, 403, 404, 429) } } },
    async (request) => jobs.status(principalOf(request), endpointOf(request), jobOf(request), parseStatusTtl(query(request).ttl)),
  );

  app.get(
    `${P}/status-sync/:jobId`,
    { ...common, config: readWait, schema: { tags, summary: 'A job once final, or as it stands after ?wait ms', params: jobParams, querystring: waitQuery, response: { 200: jobViewSchema, ...errorResponses(400, 401, 403, 404, 429) } } },
    async (request, reply) => {
      const waitMs = parseWait(query(request).wait);
      return jobs.statusSync(principalOf(request), endpointOf(request), jobOf(request), waitMs, callerGone(reply));
    },
  );

  app.get(
    `${P}/stream/:jobId`,
    { ...common, config: { ...readWait, changesState: true }, schema: { tags, summary: 'Stream chunks no earlier poll returned (a final status comes with an empty stream)', params: jobParams, response: { 200: jobStreamViewSchema, ...errorResponses(401, 403, 404, 429) } } },
    async (request, reply) => jobs.stream(principalOf(request), endpointOf(request), jobOf(request), callerGone(reply)),
  );

  app.post(
    `${P}/cancel/:jobId`,
    { ...common, config: write, schema: { tags, summary: 'Cancel a queued or running job', params: jobParams, response: { 200: jobViewSchema, ...errorResponses(401, 403, 404, 409, 429) } } },
    async (request) => jobs.cancel(principalOf(request), endpointOf(request), jobOf(request)),
  );

  app.post(
    `${P}/retry/:jobId`,
    { ...common, config: write, schema: { tags, summary: 'Queue a FAILED or TIMED_OUT job again, same id', params: jobParams, response: { 200: jobViewSchema, ...errorResponses(401, 402, 403, 404, 409, 429) } } },
    async (request) => jobs.retry(principalOf(request), endpointOf(request), jobOf(request)),
  );

  app.post(
    `${P}/purge-queue`,
    { ...common, config: write, schema: { tags, summary: "Cancel every queued job of the endpoint (running ones go on)", params: endpointParams, response: { 200: jobPurgeViewSchema, ...errorResponses(401, 403, 404, 429) } } },
    async (request) => jobs.purgeQueue(principalOf(request), endpointOf(request)),
  );

  app.get(
    `${P}/health`,
    { ...common, config: read, schema: { tags, summary: 'Job counts and worker counts of the endpoint', params: endpointParams, response: { 200: jobHealthViewSchema, ...errorResponses(401, 403, 404, 429) } } },
    async (request) => jobs.health(principalOf(request), endpointOf(request)),
  );
}
