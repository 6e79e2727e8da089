// `POST /v2/accounts/{id}/credits {"amount": <USD>}` (operators): adds credits to an account (a
// negative amount takes some back) and answers the account with its usage and what is left
// (`clientBalance`). An account with nothing left cannot submit jobs (402 CREDITS_EXHAUSTED).
// docs/billing.md, "Credits".
import type { FastifyInstance } from 'fastify';
import { accountCreditSchema, accountViewSchema } from '../../model/index.ts';
import type { AccountCredits } from '../../core/index.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

export function creditRoutes(fastify: FastifyInstance, credits: AccountCredits): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/accounts/:id/credits',
    {
      config: { scope: 'admin', operator: true },
      schema: { tags: ['accounts'], summary: 'Grant credits (USD; negative takes back)', params: idParams, body: docSchema(accountCreditSchema), response: { 200: accountViewSchema, ...errorResponses(401, 403, 404, 422, 429) } },
    },
    async (request) => credits.grant(request.params.id, request.body),
  );
}
