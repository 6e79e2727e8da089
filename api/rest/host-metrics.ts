// GET /v2/hosts/{id}/metrics?from&to&step (docs/gpu-metrics.md): each GPU's utilisation, memory,
// temperature and power in buckets of `step`, with its last poll, from this replica's GPU watcher
// (core/hosts/gpu-usage-history.ts). Operators with an admin key, as the other host routes; the window
// is the serverless metrics' (parseMetricsWindow: 422 VALIDATION_FAILED naming the parameter).
import type { FastifyInstance } from 'fastify';
import { hostMetricsSchema, metricsWindowQuerySchema } from '../../model/index.ts';
import { parseMetricsWindow, windowView, type Services } from '../../core/index.ts';
import { errorResponses, idParams, queryByHand, type RestTypeProvider } from './route-schema.ts';

export function hostMetricsRoutes(fastify: FastifyInstance, s: Services): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/hosts/:id/metrics',
    {
      config: { scope: 'admin', operator: true },
      schema: {
        tags: ['fleet'],
        summary: "A host's GPUs over time: utilisation, memory, temperature and power per step, and each GPU's last poll",
        params: idParams,
        querystring: queryByHand(metricsWindowQuerySchema),
        response: { 200: hostMetricsSchema, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (r) => {
      const host = await s.fleet.get(r.params.id);
      const w = parseMetricsWindow((r.query ?? {}) as Record<string, unknown>, Date.now());
      return {
        hostId: host.id,
        ...windowView(w),
        sampling: s.gpuUsage.isSampling(host.id),
        gpus: s.gpuUsage.query(host, w),
      };
    },
  );
}
