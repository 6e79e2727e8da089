// The public v2 serverless shapes (`/v2/serverless`, runpod-compat.md 4.2) over the v1 endpoint
// records: a v2 body is mapped onto the v1 fields and goes through EndpointService, so both
// interfaces keep one record and one set of rules; validation failures name the v2 paths.
// docs/endpoints.md, "v2".
import { resolveGpuIdOrPool } from '../fleet/index.ts';
import {
  check,
  compile,
  endpointV2CreateSchema,
  endpointV2UpdateSchema,
  GpufleetError,
  isGpufleetError,
  type EndpointCreateInput,
  type EndpointRecord,
  type EndpointV2Input,
} from '../model/index.ts';
import type { Principal } from './api-keys.ts';
import type { EndpointService } from './endpoint-service.ts';

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

/** `POST /v2/serverless` */
export async function createEndpointV2(endpoints: EndpointService, principal: Principal, body: unknown): Promise<EndpointRecord> {
  const input = check(validateCreate, body, 'endpoint');
  const v1 = { executionTimeoutMs: V2_DEFAULT_TIMEOUT_MS, ...toV1(input) };
  return endpoints.create(principal, v1).catch((e: unknown) => Promise.reject(toV2Errors(e)));
}

/** `PATCH /v2/serverless/{id}`: the fields sent, over the stored ones */
export async function updateEndpointV2(endpoints: EndpointService, principal: Principal, id: string, body: unknown): Promise<EndpointRecord> {
  const input = check(validateUpdate, body, 'endpoint update');
  return endpoints.update(principal, id, toV1(input)).catch((e: unknown) => Promise.reject(toV2Errors(e)));
}

/** The v2 `Endpoint`; `origin` is where the caller reached the API (for `requestUrls`). */
export function toEndpointV2View(e: EndpointRecord, origin: string) {
  const base = `${origin}/v2/${e.id}`;
  return {
    id: e.id,
    userId: e.accountId,
    name: e.name,
    type: e.type,
    templateId: e.templateId,
    // the job interface serves QUEUE endpoints; load-balancing endpoints are not served (yet)
    requestUrls:
      e.type === 'QUEUE'
        ? {
            run: `${base}/run`,
            runSync: `${base}/runsync`,
            status: `${base}/status/{jobId}`,
            stream: `${base}/stream/{jobId}`,
            cancel: `${base}/cancel/{jobId}`,
            retry: `${base}/retry/{jobId}`,
            purgeQueue: `${base}/purge-queue`,
            health: `${base}/health`,
          }
        : {},
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
  };
}
export type EndpointV2View = ReturnType<typeof toEndpointV2View>;
