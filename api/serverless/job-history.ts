// GET /v2/serverless/{id}/jobs?status=&limit=&cursor=&include=: an endpoint's job history, newest
// first, a page at a time (our extension beside /metrics and /workers; docs/serverless.md, "Job
// history"). Through the job queue's port (embedded and PostgreSQL alike); the caller's own
// endpoint only (another account's is 404), the caller's jobs only; bodies only when asked for.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jobHistoryQuerySchema, jobHistorySchema } from '../../model/index.ts';
import type { JobService } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { errorResponses, idParams, queryByHand } from '../rest/route-schema.ts';

export function jobHistoryRoutes(app: FastifyInstance, jobs: JobService): void {
  app.get(
    '/v2/serverless/:id/jobs',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['serverless'],
        summary: "A serverless endpoint's jobs, newest first: status filter, cursor paging; input, output and error only with ?include",
        params: idParams,
        querystring: queryByHand(jobHistoryQuerySchema),
        response: { 200: jobHistorySchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request: FastifyRequest) =>
      jobs.history(principalOf(request), (request.params as { id: string }).id, (request.query ?? {}) as Record<string, unknown>),
  );
}
