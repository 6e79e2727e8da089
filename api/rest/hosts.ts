// Fleet administration (operator accounts, admin scope): enroll, list, show, drain, refresh,
// accept a changed host key, remove. docs/fleet.md describes enrollment.
import type { FastifyInstance } from 'fastify';
import { gpuHealth, hostUnderlay, incidentLiveSince, type HostRecord, type PodRecord } from '../../model/index.ts';
import { hostDrainSchema, hostEnrollSchema, hostListViewSchema, hostUpdateSchema, hostViewSchema, type HostDrainInput, type HostEnrollInput, type HostUpdateInput } from '../../model/index.ts';
import { gpuUuidParams, hostDiagnoseResultSchema, hostDiagnoseSchema, hostGpuClearSchema, userActor, type HostDiagnoseInput, type HostGpuClearInput } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { check, compile } from '../../model/index.ts';
import { parseSshAddress } from '../../core/index.ts';
import type { Services } from '../../core/index.ts';
import { docSchema, errorResponses, idParams, queryByHand, queryFlag, type RestTypeProvider } from './route-schema.ts';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';
import { toProblem } from '../errors/problem.ts';

const validateEnroll = compile<HostEnrollInput>(hostEnrollSchema);
const validateDrain = compile<HostDrainInput>(hostDrainSchema);
const validateUpdate = compile<HostUpdateInput>(hostUpdateSchema);
const validateDiagnose = compile<HostDiagnoseInput>(hostDiagnoseSchema);
const validateClear = compile<HostGpuClearInput>(hostGpuClearSchema);
/** a GPU uuid in a path: checked here (route schemas are not run), 404 like any GPU the host lacks */
const GPU_UUID = /^GPU-[0-9A-Fa-f-]{8,64}$/;

/**
 * The host as the API shows it: never the (encrypted) private key. With the host's pods, a drain's
 * `remaining` counts those still there that want to run (docs/gpu-health.md, "Acting on it").
 */
export function hostView(h: HostRecord, pods?: readonly PodRecord[]) {
  const { privateKeyEnc: _secret, ...rest } = h;
  // every GPU with its health and incidents (docs/gpu-health.md); records from before them: HEALTHY, none
  const gpus = h.facts.gpus.map((g) => ({ ...g, health: gpuHealth(g), incidents: (g.incidents ?? []).map((i) => ({ ...i, liveSince: incidentLiveSince(i) })), busId: g.busId ?? null, diagnostic: g.diagnostic ?? null }));
  const remaining = pods?.filter((p) => p.desiredStatus === 'RUNNING' && p.status !== 'TERMINATED').length ?? null;
  const drain = h.drain ? { ...h.drain, remaining } : null;
  // Reachable, Schedulable, GpusHealthy, ContainersStuck (docs/fleet.md "Conditions"); none yet on a host stored before them
  // the overlay's address of the host (docs/networking.md, "A host's overlay address")
  const overlay = { bootId: h.bootId ?? null, connectedAddress: h.connectedAddress ?? null, overlayAddress: h.overlayAddress ?? null, overlayUnderlay: hostUnderlay(h) };
  return { ...rest, ...overlay, facts: { ...h.facts, gpus }, drain, lost: h.lost ?? null, stuckContainers: h.stuckContainers ?? [], conditions: h.conditions ?? [] };
}

export function hostRoutes(fastify: FastifyInstance, s: Services): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  const config = { scope: 'admin', operator: true } as const;
  const tags = ['fleet'];

  app.post(
    '/v2/hosts',
    { config, schema: { tags, summary: 'Enroll a host over SSH (send Accept: application/x-ndjson for progress lines)', body: docSchema(hostEnrollSchema), response: { 201: hostViewSchema } } },
    async (request, reply) => {
      const input = check(validateEnroll, request.body, 'host enrollment');
      const ssh = parseSshAddress(input.ssh);
      const enroll = { ...ssh, privateKey: input.privateKey, dataCenterId: input.dataCenterId, cloud: input.cloud, ...(input.overlayAddress !== undefined ? { overlayAddress: input.overlayAddress } : {}) };
      if (!String(request.headers.accept ?? '').includes('application/x-ndjson')) {
        const host = await s.fleet.enroll(enroll, (step) => request.log.info({ step }, 'enroll'));
        return reply.code(201).send(hostView(host));
      }
      // streamed: one JSON line per step, then the host or the problem
      reply.hijack();
      reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'application/x-ndjson' });
      const line = (o: unknown) => reply.raw.write(JSON.stringify(o) + '\n');
      try {
        const host = await s.fleet.enroll(enroll, (step) => line({ progress: step }));
        line({ host: hostView(host) });
      } catch (e) {
        // the stream is already 200: the problem goes in its last line, through the registry like any other
        const err = isGpufleetError(e) ? e : new GpufleetError('INTERNAL', 'Enrollment failed with an internal error; it has been logged.', { cause: e });
        if (err.status >= 500) request.log.error({ err: e, code: err.code }, 'host enrollment failed');
        line({ problem: toProblem(err) });
      }
      reply.raw.end();
    },
  );

  app.get('/v2/hosts', { config, schema: { tags, summary: 'List hosts', response: { 200: hostListViewSchema } } }, async () => ({
    hosts: (await s.store.list('hosts')).map((h) => hostView(h)),
  }));
  app.patch(
    '/v2/hosts/:id',
    { config, schema: { tags, summary: "Set the host's address for the overlay (an IPv4 address it has; null: the default)", params: idParams, body: docSchema(hostUpdateSchema), response: { 200: hostViewSchema } } },
    async (r) => {
      const body = check(validateUpdate, r.body ?? {}, 'host update');
      return hostView(await s.fleet.setOverlayAddress(r.params.id, body.overlayAddress ?? null), await s.store.list('pods', { hostId: r.params.id }));
    },
  );
  app.get('/v2/hosts/:id', { config, schema: { tags, summary: 'Show a host', params: idParams, response: { 200: hostViewSchema } } }, async (r) =>
    hostView(await s.fleet.get(r.params.id), await s.store.list('pods', { hostId: r.params.id })),
  );
  // returning a GPU to service (docs/gpu-health.md): a diagnostic whose pass clears it, or an operator's clear
  app.post('/v2/hosts/:id/diagnose', { config, schema: { tags, summary: 'Run a GPU diagnostic (dcgmi diag, or the driver check) on one GPU or all; a pass returns a GPU to service', params: idParams, body: docSchema(hostDiagnoseSchema), response: { 200: hostDiagnoseResultSchema, ...errorResponses(401, 403, 404, 409, 422, 429) } } }, async (r) => {
    const body = check(validateDiagnose, r.body ?? {}, 'diagnose request');
    const res = await s.gpuDiagnostics.diagnose(r.params.id, { ...(body.gpu !== undefined ? { gpu: body.gpu } : {}), ...(body.level !== undefined ? { level: body.level as 1 | 2 } : {}) }, userActor(principalOf(r).keyId));
    return { ...res, host: hostView(res.host) };
  });
  app.post('/v2/hosts/:id/gpus/:uuid/clear', { config, schema: { tags, summary: 'Return a GPU to service by hand (recorded with who)', params: gpuUuidParams, body: docSchema(hostGpuClearSchema), response: { 200: hostViewSchema, ...errorResponses(401, 403, 404, 422, 429) } } }, async (r) => {
    const body = check(validateClear, r.body ?? {}, 'clear request');
    const uuid = (r.params as { uuid: string }).uuid;
    if (!GPU_UUID.test(uuid)) throw new GpufleetError('NOT_FOUND', `Host ${r.params.id} has no GPU ${uuid.slice(0, 80)}.`);
    return hostView(await s.gpuDiagnostics.clear(r.params.id, uuid, userActor(principalOf(r).keyId), body.reason));
  });
  app.post(
    '/v2/hosts/:id/drain',
    { config, schema: { tags, summary: 'Drain (or undrain) a host; with a deadline, also move its pods off', params: idParams, body: docSchema(hostDrainSchema), response: { 200: hostViewSchema } } },
    async (r) => {
    const body = check(validateDrain, r.body ?? {}, 'drain request');
      return hostView(await s.fleet.drain(r.params.id, body.drained ?? true, body.deadline), await s.store.list('pods', { hostId: r.params.id }));
    },
  );
  app.post(
    '/v2/hosts/:id/lost',
    { config, schema: { tags, summary: 'Confirm an unreachable host is gone: its pods move, those with a network volume too', params: idParams, response: { 200: hostViewSchema } } },
    async (r) => hostView(await s.fleet.confirmLost(r.params.id)),
  );
  app.post('/v2/hosts/:id/refresh', { config, schema: { tags, summary: 'Probe a host again (re-detect GPUs)', params: idParams, response: { 200: hostViewSchema } } }, async (r) =>
    hostView(await s.fleet.refresh(r.params.id)),
  );
  app.post('/v2/hosts/:id/accept-host-key', { config, schema: { tags, summary: 'Pin the host key the host now presents', params: idParams, response: { 200: hostViewSchema } } }, async (r) =>
    hostView(await s.fleet.acceptHostKey(r.params.id)),
  );
  /** read as sent: only force=true forces */
  const removeQuery = queryByHand({ type: 'object', properties: { force: queryFlag('remove the host even with pods on it') } });
  app.delete('/v2/hosts/:id', { config, schema: { tags, summary: 'Remove a host (?force=true even with pods)', params: idParams, querystring: removeQuery } }, async (r, reply) => {
    const leftover = await s.fleet.remove(r.params.id, r.query.force === 'true');
    // the host is out of the fleet either way; what could not be cleaned from it is said, not hidden
    if (leftover) {
      r.log.warn({ hostId: r.params.id, leftover }, 'removed host not cleaned');
      reply.header('gpufleet-warning', leftover.replace(/[^\x20-\x7e]/g, '?').slice(0, 300));
    }
    return reply.code(204).send();
  });
}
