// Serverless endpoint records (v1 /endpoints, GraphQL saveEndpoint). The record is what the autoscaler
// (core/workers/autoscaler.ts) reads to make and retire the endpoint's workers (docs/endpoints.md):
// bounds (workersMin/Max), the scaler, idleTimeout in seconds, GPU types already expanded from pools in
// priority order, and `version`, bumped whenever a change needs new workers.
import { randomBytes } from 'node:crypto';
import { resolveGpuIdOrPool } from '../../fleet/index.ts';
import { GpufleetError } from '../../model/index.ts';
import type { EndpointRecord, TemplateRecord } from '../../model/index.ts';
import {
  ENDPOINT_DEFAULTS,
  endpointCreateSchema,
  endpointSaveSchema,
  endpointUpdateSchema,
  type EndpointCreateInput,
  type EndpointSaveInput,
  type EndpointUpdateInput,
} from '../../model/index.ts';
import { check, compile, fail400, fail422 } from '../../model/index.ts';
import { checkWorkerBounds } from '../../model/index.ts';
import type { Store, StoreReader, StoreTx } from '../../store/index.ts';
import { cudaVersionsAtLeast } from '../hosts/index.ts';
import { dataCenterExists } from '../volumes/index.ts';
import { validateTemplateCreate, type TemplateService } from './template-service.ts';
import { pinOf, repin } from './template-pins.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<EndpointCreateInput>(endpointCreateSchema);
const validateSave = compile<EndpointSaveInput>(endpointSaveSchema);
const validateUpdate = compile<EndpointUpdateInput>(endpointUpdateSchema);

/** What GraphQL's EndpointInput carries beside the save body: a CUDA minimum (cuda-versions.ts). */
export interface EndpointSaveOptions {
  minCudaVersion?: string | undefined;
}

export interface EndpointListFilter {
  name?: string;
  templateId?: string;
  tag?: Record<string, string>;
}

/** Fields whose change means the running workers no longer match: the autoscaler replaces them. */
const WORKER_SPEC = ['type', 'templateId', 'templatePin', 'gpuTypeIds', 'gpuCount', 'networkVolumeId', 'dataCenterIds', 'cloud', 'flashboot', 'allowedCudaVersions', 'env'] as const;

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 14 lowercase alphanumerics like the public platform: the id is a path segment of `{run_url}/v2/{id}/run`. */
function endpointId(): string {
  let id = '';
  for (const b of randomBytes(14)) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

/**
 * The v1 `Endpoint` shape. `gpuTypeIds` echoes what the client sent (pool ids stay pool ids, so a
 * declared stack sees no drift); `resolvedGpuTypeIds` is the expanded priority list workers use.
 */
export function toEndpointView(e: EndpointRecord) {
  const { tags, ...fields } = toInput(e);
  return {
    id: e.id,
    userId: e.accountId,
    computeType: 'GPU' as const,
    ...fields,
    resolvedGpuTypeIds: e.gpuTypeIds,
    version: e.version,
    tags,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}
export type EndpointView = ReturnType<typeof toEndpointView>;

export class EndpointService {
  constructor(
    private readonly store: Store,
    /** public for the v2 shapes, whose container fields are the endpoint's template's (endpoint-v2.ts) */
    readonly templates: TemplateService,
  ) {}

  async create(principal: Principal, body: unknown): Promise<EndpointRecord> {
    const input = check(validateCreate, body, 'endpoint');
    return this.store.transact((tx) => this.createIn(tx, principal, input));
  }

  async createIn(tx: StoreTx, principal: Principal, input: EndpointCreateInput): Promise<EndpointRecord> {
    const now = new Date().toISOString();
    const rec = await buildEndpoint(tx, principal, input, { id: endpointId(), createdAt: now, version: 0 }, now, { chosen: true });
    tx.put('endpoints', rec);
    return rec;
  }

  /** GraphQL saveEndpoint: without `id` a create; with `id` a full replace (omitted fields take defaults). */
  async save(principal: Principal, body: unknown, options: EndpointSaveOptions = {}): Promise<EndpointRecord> {
    const input = check(validateSave, body, 'endpoint');
    return this.store.transact((tx) => this.saveIn(tx, principal, input, options));
  }

  /**
   * saveEndpoint with an inline template: the template and the endpoint are created in one
   * transaction, so an endpoint that fails leaves no template behind (and no reader ever saw one).
   * `body` is the save body without templateId; the template is the v2 template body, made serverless.
   */
  async saveWithTemplate(
    principal: Principal,
    templateBody: Record<string, unknown>,
    body: Record<string, unknown>,
    options: EndpointSaveOptions = {},
  ): Promise<{ endpoint: EndpointRecord; template: TemplateRecord }> {
    const templateInput = validateTemplateCreate({ ...templateBody, serverless: true });
    return this.store.transact(async (tx) => {
      const template = await this.templates.createIn(tx, principal, templateInput);
      const input = check(validateSave, { ...body, templateId: template.id }, 'endpoint');
      return { endpoint: await this.saveIn(tx, principal, input, options), template };
    });
  }

  private async saveIn(tx: StoreTx, principal: Principal, input: EndpointSaveInput, options: EndpointSaveOptions): Promise<EndpointRecord> {
    const { id, ...fields } = input;
    const allowedCudaVersions = await cudaVersionsAtLeast(tx, options.minCudaVersion, fields.allowedCudaVersions, 'endpoint');
    const withCuda = allowedCudaVersions ? { ...fields, allowedCudaVersions } : fields;
    if (id === undefined) return this.createIn(tx, principal, withCuda);
    // a save names templateId: the account chooses the template as it is now (template-pins.ts)
    return this.replaceIn(tx, principal, await own(tx, principal, id), withCuda, true);
  }

  async get(principal: Principal, id: string): Promise<EndpointRecord> {
    return own(this.store, principal, id);
  }

  async list(principal: Principal, f: EndpointListFilter = {}): Promise<EndpointRecord[]> {
    return (await this.store.list('endpoints', { accountId: principal.accountId }))
      .filter(
        (e) =>
          (f.name === undefined || e.name === f.name) &&
          (f.templateId === undefined || e.templateId === f.templateId) &&
          Object.entries(f.tag ?? {}).every(([k, v]) => e.tags[k] === v),
      )
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /** PATCH: the sent fields over the stored ones, then every rule again on the result. */
  async update(principal: Principal, id: string, body: unknown): Promise<EndpointRecord> {
    const patch = check(validateUpdate, body, 'endpoint update');
    return this.store.transact(async (tx) => {
      const cur = await own(tx, principal, id);
      const merged: EndpointCreateInput = { ...toInput(cur), ...patch };
      // naming templateId (even the same one) takes the template as it is now; leaving it out keeps the pin
      return this.replaceIn(tx, principal, cur, merged, patch.templateId !== undefined);
    });
  }

  /**
   * Deletes the record, then runs the `onDeleted` hooks: the job side cancels the endpoint's queued
   * and running jobs and drops their history; the autoscaler stops its workers when it sees it gone.
   */
  async delete(principal: Principal, id: string): Promise<void> {
    const rec = await this.store.transact(async (tx) => {
      const e = await own(tx, principal, id);
      tx.delete('endpoints', id);
      return e;
    });
    // every hook runs even when one fails; the first failure is then reported (the record is gone)
    const failures: unknown[] = [];
    for (const hook of [...this.deleteHooks]) await hook(rec).catch((e: unknown) => failures.push(e));
    if (failures.length) throw new GpufleetError('INTERNAL', `Endpoint ${id} was deleted, but cleaning up after it failed.`, { cause: failures[0] });
  }

  private readonly deleteHooks = new Set<(e: EndpointRecord) => Promise<void>>();

  /** `hook` runs after an endpoint is deleted (by v1, v2 or GraphQL); returns the unsubscribe */
  onDeleted(hook: (e: EndpointRecord) => Promise<void>): () => void {
    this.deleteHooks.add(hook);
    return () => this.deleteHooks.delete(hook);
  }

  private async replaceIn(tx: StoreTx, principal: Principal, cur: EndpointRecord, input: EndpointCreateInput, chosen: boolean): Promise<EndpointRecord> {
    const now = new Date().toISOString();
    const next = await buildEndpoint(tx, principal, input, { id: cur.id, createdAt: cur.createdAt, version: cur.version }, now, { chosen, cur });
    if (WORKER_SPEC.some((k) => JSON.stringify(cur[k]) !== JSON.stringify(next[k]))) next.version = cur.version + 1;
    tx.put('endpoints', next);
    return next;
  }
}

/** The stored record as the input that would recreate it (PATCH merges over this). */
function toInput(e: EndpointRecord): EndpointCreateInput {
  return {
    name: e.name,
    templateId: e.templateId,
    type: e.type,
    gpuTypeIds: e.gpuPools,
    gpuCount: e.gpuCount,
    workersMin: e.workersMin,
    workersMax: e.workersMax,
    idleTimeout: e.idleTimeout,
    scalerType: e.scalerType,
    scalerValue: e.scalerValue,
    networkVolumeId: e.networkVolumeId,
    dataCenterIds: e.dataCenterIds,
    cloud: e.cloud,
    flashboot: e.flashboot,
    executionTimeoutMs: e.executionTimeoutMs,
    allowedCudaVersions: e.allowedCudaVersions,
    env: e.env,
    tags: e.tags,
  };
}

async function buildEndpoint(
  tx: StoreTx,
  principal: Principal,
  input: EndpointCreateInput,
  base: { id: string; createdAt: string; version: number },
  now: string,
  pin: { chosen: boolean; cur?: EndpointRecord },
): Promise<EndpointRecord> {
  const errors: string[] = [];
  const template = await tx.get('templates', input.templateId);
  // an update that does not name the template keeps the endpoint's pin, even when the template has
  // since been made private: the endpoint runs the copy it chose (template-pins.ts)
  const kept = !pin.chosen && pin.cur && pin.cur.templateId === input.templateId && pin.cur.templatePin ? pin.cur.templatePin : undefined;
  if (!kept && (!template || (template.accountId !== principal.accountId && !template.public)))
    errors.push(`$.templateId: template ${input.templateId} not found`);
  const gpuTypeIds: string[] = [];
  input.gpuTypeIds.forEach((g, i) => {
    const ids = resolveGpuIdOrPool(g);
    if (ids.length === 0) errors.push(`$.gpuTypeIds[${i}]: unknown GPU type or pool "${g}" (see GET /v2/catalog/gpus)`);
    for (const id of ids) if (!gpuTypeIds.includes(id)) gpuTypeIds.push(id);
  });
  const dataCenterIds = input.dataCenterIds ?? [];
  for (const [i, dc] of dataCenterIds.entries())
    if (!(await dataCenterExists(tx, dc))) errors.push(`$.dataCenterIds[${i}]: unknown data center "${dc}"`);
  const volumeId = input.networkVolumeId ?? null;
  const volume = volumeId === null ? undefined : await tx.get('networkVolumes', volumeId);
  if (volumeId !== null && (!volume || volume.accountId !== principal.accountId))
    errors.push(`$.networkVolumeId: network volume ${volumeId} not found`);
  if (errors.length) fail422('endpoint', errors);

  const workersMin = input.workersMin ?? ENDPOINT_DEFAULTS.workersMin;
  const workersMax = input.workersMax ?? ENDPOINT_DEFAULTS.workersMax;
  checkWorkerBounds(workersMin, workersMax);
  // workers mount the volume, so they can only run in its data center
  if (volume && dataCenterIds.length > 0 && !dataCenterIds.includes(volume.dataCenterId))
    fail400(`Network volume ${volume.id} is in data center ${volume.dataCenterId}, which dataCenterIds excludes.`, [
      '$.networkVolumeId: volume is in another data center',
    ]);

  return {
    id: base.id,
    accountId: principal.accountId,
    name: input.name ?? template?.name ?? base.id,
    type: input.type ?? ENDPOINT_DEFAULTS.type,
    templateId: input.templateId,
    gpuTypeIds,
    gpuPools: [...input.gpuTypeIds],
    gpuCount: input.gpuCount ?? ENDPOINT_DEFAULTS.gpuCount,
    workersMin,
    workersMax,
    idleTimeout: input.idleTimeout ?? ENDPOINT_DEFAULTS.idleTimeout,
    scalerType: input.scalerType ?? ENDPOINT_DEFAULTS.scalerType,
    scalerValue: input.scalerValue ?? ENDPOINT_DEFAULTS.scalerValue,
    networkVolumeId: volumeId,
    dataCenterIds,
    cloud: input.cloud ?? ENDPOINT_DEFAULTS.cloud,
    flashboot: input.flashboot ?? ENDPOINT_DEFAULTS.flashboot,
    executionTimeoutMs: input.executionTimeoutMs ?? ENDPOINT_DEFAULTS.executionTimeoutMs,
    allowedCudaVersions: input.allowedCudaVersions ?? [],
    env: input.env ?? {},
    templatePin: kept ?? (pin.chosen ? repin(pin.cur?.templatePin, pin.cur?.templateId ?? '', template!, principal.accountId, now) : (pin.cur?.templatePin ?? pinOf(template!, principal.accountId, now))),
    version: base.version,
    tags: input.tags ?? {},
    createdAt: base.createdAt,
    updatedAt: now,
  };
}

async function own(store: StoreReader, principal: Principal, id: string): Promise<EndpointRecord> {
  const e = await store.get('endpoints', id);
  if (!e || e.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${id} was not found.`);
  return e;
}

/** Where workers may run: the volume's data center when one is attached, else dataCenterIds ([] = any). */
export async function endpointDataCenters(store: StoreReader, e: EndpointRecord): Promise<string[]> {
  if (e.networkVolumeId === null) return e.dataCenterIds;
  const vol = await store.get('networkVolumes', e.networkVolumeId);
  return vol ? [vol.dataCenterId] : e.dataCenterIds;
}
