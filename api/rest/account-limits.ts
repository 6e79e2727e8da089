// `GET /v2/accounts/{id}/limits` (the account itself, or an operator) and `PATCH` (operators): each
// limit beside the account's current use; a field sent as null clears that limit (docs/teams.md).
import type { FastifyInstance } from 'fastify';
import { accountLimitsPatchSchema, accountLimitsViewSchema } from '../../model/index.ts';
import type { AccountLimitsService } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

export function accountLimitRoutes(fastify: FastifyInstance, limits: AccountLimitsService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/accounts/:id/limits',
    {
      config: { scope: 'read' },
      schema: { tags: ['accounts'], summary: "An account's limits with their current use (its own; operators: any)", params: idParams, response: { 200: accountLimitsViewSchema, ...errorResponses(401, 404, 429) } },
    },
    async (request) => limits.get(principalOf(request), request.params.id),
  );
  app.patch(
    '/v2/accounts/:id/limits',
    {
      config: { scope: 'admin', operator: true },
      schema: {
        tags: ['accounts'],
        summary: 'Set or clear (null) limits of an account: gpus, gpusByType, interruptibleGpus, pods, workers, volumeGb, spendPerHour, monthlyBudget, budgetAction',
        params: idParams,
        body: docSchema(accountLimitsPatchSchema),
        response: { 200: accountLimitsViewSchema, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => limits.patch(request.params.id, request.body, 'operator'),
  );
}
