// The public v2 serverless shapes (`/v2/serverless`, runpod-compat.md 4.2) over the v1 endpoint
// records: a v2 body is mapped onto the v1 fields and goes through EndpointService, so both
// interfaces keep one record and one set of rules; validation failures name the v2 paths.
// docs/endpoints.md, "v2".
import { resolveGpuIdOrPool } from '../../fleet/index.ts';
import {
  check,
  compile,
  ENDPOINT_V2_CONTAINER_FIELDS,
  endpointV2CreateSchema,
  endpointV2UpdateSchema,
  GpufleetError,
  isGpufleetError,
  type EndpointCreateInput,
  type EndpointRecord,
  type EndpointV2Input,
  type TemplateRecord,
} from '../../model/index.ts';
import type { EndpointService } from './endpoint-service.ts';
import { validateTemplateUpdate } from './template-service.ts';
import { endpointRequestUrls } from './request-urls.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<EndpointV2Input>(endpointV2CreateSchema);
const validateUpdate = compile<EndpointV2Input>(endpointV2UpdateSchema);

/** the v2 default execution timeout (ms) when a v2 create names none; v1 creates keep 600000 */
export const V2_DEFAULT_TIMEOUT_MS = 300_000;

/** v1 field → the v2 path a failure on it is reported under */
const V2_PATHS: [RegExp, string][] = [
  [/^\$\.gpuTypeIds/, '$.gpu.pools'],
  [/^\$\.gpuCount/, '$.gpu.count'],
  [/^\$\.allowedCudaVersions/, '$.gpu.allowedCudaVersions'],
  [/^\$\.workersMin/, '$.workers.min'],
  [/^\$\.workersMax/, '$.workers.max'],
  [/^\$\.idleTimeout/, '$.workers.idleTimeout'],
  [/^\$\.scalerType/, '$.scaling.type'],
  [/^\$\.scalerValue/, '$.scaling'],
  [/^\$\.executionTimeoutMs/, '$.timeout'],
  [/^\$\.networkVolumeId/, '$.networkVolumes[0]'],
];

function toV2Errors(e: unknown): unknown {
  if (!isGpufleetError(e) || !e.errors?.length) return e;
  const errors = e.errors.map((line) => V2_PATHS.reduce((l, [re, to]) => l.replace(re, to), line));
  return new GpufleetError(e.code, `The endpoint failed validation: ${errors.join('; ')}`, { errors, cause: e, fields: e.fields });
}

/** v2 body → v1 fields; only the fields the body names (a PATCH changes nothing else) */
function toV1(input: EndpointV2Input): Partial<EndpointCreateInput> {
  const out: Partial<EndpointCreateInput> = {};
  if (input.cpu?.length) {
    throw new GpufleetError('VALIDATION_FAILED', 'CPU endpoints are not offered yet; give gpu.pools.', { errors: ['$.cpu: CPU endpoints are not offered yet'] });
  }
  if (input.name !== undefined) out.name = input.name;
  if (input.type !== undefined) out.type = input.type;
  if (input.templateId !== undefined) out.templateId = input.templateId;
  if (input.scaling) {
    out.scalerType = input.scaling.type;
    out.scalerValue = input.scaling.type === 'QUEUE_DELAY' ? input.scaling.queueDelay : input.scaling.requestCount;
  }
  if (input.gpu) {
    const excluded = new Set(input.gpu.excludedTypes ?? []);
    if (excluded.size === 0) out.gpuTypeIds = [...input.gpu.pools];
    else {
      // exclusions are applied here: the record then lists the remaining GPU types, not the pools
      const ids = input.gpu.pools.flatMap((p) => (resolveGpuIdOrPool(p).length ? resolveGpuIdOrPool(p) : [p])).filter((id) => !excluded.has(id));
      if (ids.length === 0)
        throw new GpufleetError('VALIDATION_FAILED', 'gpu.excludedTypes excludes every GPU type of gpu.pools.', { errors: ['$.gpu.excludedTypes: excludes every GPU type of the pools'] });
      out.gpuTypeIds = [...new Set(ids)];
    }
    if (input.gpu.count !== undefined) out.gpuCount = input.gpu.count;
    if (input.gpu.allowedCudaVersions !== undefined) out.allowedCudaVersions = input.gpu.allowedCudaVersions;
  }
  if (input.dataCenterIds !== undefined) out.dataCenterIds = input.dataCenterIds;
  if (input.flashboot !== undefined) out.flashboot = input.flashboot !== 'OFF';
  if (input.networkVolumes !== undefined) out.networkVolumeId = input.networkVolumes[0] ?? null;
  if (input.timeout !== undefined) out.executionTimeoutMs = input.timeout;
  if (input.workers?.min !== undefined) out.workersMin = input.workers.min;
  if (input.workers?.max !== undefined) out.workersMax = input.workers.max;
  if (input.workers?.idleTimeout !== undefined) out.idleTimeout = input.workers.idleTimeout;
  if (input.env !== undefined) out.env = input.env;
  if (input.tags !== undefined) out.tags = input.tags;
  return out;
}

/** the container fields the body names (image, args, disk, ports, registry), or undefined */
function containerOf(input: EndpointV2Input): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const k of ENDPOINT_V2_CONTAINER_FIELDS) if (input[k] !== undefined) out[k] = input[k];
  return Object.keys(out).length ? out : undefined;
}

const BOTH = 'give templateId or the container fields (image, args, disk, ports, registry), not both: an endpoint runs one template, and fields over a template are not offered for endpoints';

/**
 * `POST /v2/serverless`. With `templateId`, the endpoint runs that template. With the container
 * fields instead (`image` required), a serverless template of the caller's account is made from them
 * (named `<name>__template`, as saveEndpoint's inline template is) in the same transaction as the
 * endpoint, so a refused endpoint leaves no template behind.
 */
export async function createEndpointV2(endpoints: EndpointService, principal: Principal, body: unknown): Promise<EndpointRecord> {
  const input = check(validateCreate, body, 'endpoint');
  const container = containerOf(input);
  if (input.templateId !== undefined && container)
    throw new GpufleetError('BAD_REQUEST', `The endpoint names both a template and container fields; ${BOTH}.`, { errors: [`$.templateId: ${BOTH}`] });
  if (input.templateId === undefined && container?.image === undefined)
    throw new GpufleetError('VALIDATION_FAILED', 'The endpoint failed validation: $.image: is required when templateId is not given', { errors: ['$.image: is required when templateId is not given'] });
  const v1 = { executionTimeoutMs: V2_DEFAULT_TIMEOUT_MS, ...toV1(input) };
  const made = container
    ? endpoints.saveWithTemplate(principal, { name: `${input.name}__template`, ...container }, v1).then((r) => r.endpoint)
    : endpoints.create(principal, v1);
  return made.catch((e: unknown) => Promise.reject(toV2Errors(e)));
}

/**
 * `PATCH /v2/serverless/{id}`: the fields sent, over the stored ones. Container fields change the
 * endpoint's template, when that template is the caller's own and no other endpoint runs it (a
 * template change rolls the workers, as any template change does); otherwise 400. The template is
 * changed first, then the endpoint's own fields (two writes: a refusal of the second leaves the first).
 */
export async function updateEndpointV2(endpoints: EndpointService, principal: Principal, id: string, body: unknown): Promise<EndpointRecord> {
  const input = check(validateUpdate, body, 'endpoint update');
  const container = containerOf(input);
  const v1 = toV1(input);
  if (container) {
    if (input.templateId !== undefined)
      throw new GpufleetError('BAD_REQUEST', `The update names both a template and container fields; ${BOTH}.`, { errors: [`$.templateId: ${BOTH}`] });
    validateTemplateUpdate(container);
    const e = await endpoints.get(principal, id);
    const t = await endpoints.templates.get(principal, e.templateId);
    if (t.accountId !== principal.accountId)
      throw new GpufleetError('BAD_REQUEST', `Endpoint ${id} runs public template ${t.id}, which is not yours: its container fields cannot change here; give templateId of a template of yours.`, {
        errors: ['$.image: the endpoint runs a public template'],
      });
    const sharing = (await endpoints.list(principal, { templateId: t.id })).filter((x) => x.id !== id).map((x) => x.id);
    if (sharing.length)
      throw new GpufleetError('BAD_REQUEST', `Template ${t.id} also runs endpoint(s) ${sharing.join(', ')}: change it with PATCH /v2/templates/${t.id}, or give this endpoint a template of its own.`, {
        errors: ['$.image: the endpoint shares its template with other endpoints'],
      });
    await endpoints.templates.update(principal, t.id, container);
    if (Object.keys(v1).length === 0) return endpoints.get(principal, id);
  }
  return endpoints.update(principal, id, v1).catch((e: unknown) => Promise.reject(toV2Errors(e)));
}

/** the container fields of the v2 view, from the endpoint's template (absent when it is not readable) */
export type EndpointV2Container = Pick<TemplateRecord, 'image' | 'args' | 'disk' | 'ports' | 'registry'>;

/**
 * the container fields each endpoint runs, by endpoint id, for toEndpointV2View: its template's, or
 * for another account's public template the copy the endpoint pinned (template-pins.ts)
 */
export async function endpointV2Containers(endpoints: EndpointService, principal: Principal, list: readonly EndpointRecord[]): Promise<Map<string, EndpointV2Container>> {
  const templates = new Map<string, EndpointV2Container | undefined>();
  const out = new Map<string, EndpointV2Container>();
  for (const e of list) {
    const pin = e.templatePin;
    if (pin) {
      out.set(e.id, { image: pin.image, args: pin.args, disk: pin.disk, ports: pin.ports, registry: pin.registry });
      continue;
    }
    if (!templates.has(e.templateId)) {
      const t = await endpoints.templates.get(principal, e.templateId).catch(() => undefined);
      templates.set(e.templateId, t && { image: t.image, args: t.args, disk: t.disk, ports: t.ports, registry: t.registry });
    }
    const c = templates.get(e.templateId);
    if (c) out.set(e.id, c);
  }
  return out;
}

/**
 * The v2 `Endpoint`; `origin` is where the caller reached the API (for `requestUrls`); `container`
 * the container fields of its template (endpointV2Containers).
 */
export function toEndpointV2View(e: EndpointRecord, origin: string, lbDomain?: string, container?: EndpointV2Container) {
  return {
    id: e.id,
    userId: e.accountId,
    name: e.name,
    type: e.type,
    templateId: e.templateId,
    requestUrls: endpointRequestUrls(e, origin, lbDomain),
    gpu: { pools: e.gpuPools, excludedTypes: [] as string[], count: e.gpuCount, allowedCudaVersions: e.allowedCudaVersions },
    cpu: [] as unknown[],
    workers: { min: e.workersMin, max: e.workersMax, idleTimeout: e.idleTimeout },
    scaling: e.scalerType === 'QUEUE_DELAY' ? { type: e.scalerType, queueDelay: e.scalerValue } : { type: e.scalerType, requestCount: e.scalerValue },
    dataCenterIds: e.dataCenterIds,
    networkVolumes: e.networkVolumeId === null ? [] : [e.networkVolumeId],
    timeout: e.executionTimeoutMs,
    flashboot: e.flashboot ? ('FLASHBOOT' as const) : ('OFF' as const),
    env: e.env,
    tags: e.tags,
    version: e.version,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    ...(container ? { image: container.image, args: container.args, disk: container.disk, ports: container.ports, registry: container.registry } : {}),
  };
}
export type EndpointV2View = ReturnType<typeof toEndpointV2View>;
