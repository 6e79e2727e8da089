// GET /metrics (Prometheus text, docs/metrics.md) and GET /readyz (docs/metrics.md, "Health").
// /healthz (alive) stays in server.ts.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../core/index.ts';
import { GpufleetError } from '../../model/index.ts';
import { toProblem } from '../errors/problem.ts';
import { problemSchema } from '../rest/route-schema.ts';

/** /readyz: each check's answer ("ok" or why not), by name */
const checks = { type: 'object', additionalProperties: { type: 'string' } } as const;
const readySchema = { type: 'object', properties: { ready: { type: 'boolean' }, checks } } as const;
/** not ready: a problem (its detail names the checks that failed), with every check's answer */
const notReadySchema = { ...problemSchema, properties: { ...problemSchema.properties, checks } } as const;
/** alive: GET /healthz */
export const aliveSchema = { type: 'object', properties: { ok: { type: 'boolean' } } } as const;

export function healthRoutes(app: FastifyInstance, s: Pick<Services, 'telemetry' | 'readiness'>): void {
  // an operator's key (read scope is enough), or the scrape token (request-guard.ts)
  app.get('/metrics', { config: { scope: 'read', operator: true, metricsToken: true }, schema: { hide: true } }, async (_request, reply) => {
    const text = await s.telemetry.render();
    return reply.type(s.telemetry.contentType).send(text);
  });

  // public, like /healthz: a load balancer or kubelet probes it without a key
  app.get('/readyz', { config: { public: true }, schema: { hide: true, response: { 200: readySchema, 503: notReadySchema } } }, async (_request, reply) => {
    const report = await s.readiness.report();
    if (report.ready) return { ready: true, checks: report.checks };
    const notReady = Object.entries(report.checks).filter(([, v]) => v !== 'ok');
    const e = new GpufleetError('UNAVAILABLE', `Not ready: ${notReady.map(([k, v]) => `${k} (${v})`).join('; ')}.`, {
      fields: { notReady: notReady.map(([k]) => k) },
    });
    // problem+json, with each check's answer beside it
    return reply.code(e.status as 503).type('application/problem+json').send({ ...toProblem(e), checks: report.checks });
  });
}
