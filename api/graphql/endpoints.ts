// saveEndpoint / updateEndpointTemplate / deleteEndpoint and myself.endpoints over EndpointService.
// GraphQL's EndpointInput is flat and stringly (gpuIds "AMPERE_16,ADA_24", locations "A,B",
// allowedCudaVersions "12.4,12.5"); it becomes the same save input v1 validates. An inline template
// is created with the endpoint in one transaction (EndpointService.saveWithTemplate).
import { Kind, type ValueNode } from 'graphql';
import { GpufleetError } from '../../model/index.ts';
import type { EndpointRecord } from '../../model/index.ts';
import { fail400, fail422 } from '../../model/index.ts';
import type { EndpointSaveOptions } from '../../core/index.ts';
import { required, str, type GqlContext } from './context.ts';
import { cudaList, envObject, minCudaVersion, type GqlEnvInput } from './pod-input.ts';

export interface EndpointInput {
  id?: string | null;
  name?: string | null;
  templateId?: string | null;
  template?: { name?: string | null; imageName?: string | null; containerDiskInGb?: number | null; dockerArgs?: string | null; env?: (GqlEnvInput | null)[] | null } | null;
  hubReleaseId?: string | null;
  gpuIds?: string | null;
  gpuCount?: number | null;
  instanceIds?: (string | null)[] | null;
  computeType?: string | null;
  type?: string | null;
  workersMin?: number | null;
  workersMax?: number | null;
  idleTimeout?: number | null;
  scalerType?: string | null;
  scalerValue?: number | null;
  networkVolumeId?: string | null;
  networkVolumeIds?: ({ networkVolumeId?: string | null } | null)[] | null;
  locations?: string | null;
  allowedCudaVersions?: string | null;
  minCudaVersion?: string | null;
  flashBootType?: string | null;
  flashboot?: boolean | null;
  executionTimeoutMs?: number | null;
  modelReferences?: (string | null)[] | null;
  env?: (GqlEnvInput | null)[] | null;
}

/** FLASHBOOT arrives as an enum literal from runpod-python and as a string (possibly "") from runpodctl. */
export const flashBootScalar = {
  serialize: (v: unknown) => v,
  parseValue: (v: unknown) => {
    if (typeof v !== 'string') throw new GpufleetError('VALIDATION_FAILED', 'flashBootType must be a string such as FLASHBOOT or OFF.');
    return v;
  },
  parseLiteral: (node: ValueNode) => {
    if (node.kind === Kind.ENUM || node.kind === Kind.STRING) return node.value;
    throw new GpufleetError('VALIDATION_FAILED', 'flashBootType must be FLASHBOOT or OFF.');
  },
};

const list = (v: string | null | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
const ENDPOINT_TYPES: Record<string, string> = { QB: 'QUEUE', LB: 'LOAD_BALANCER' };

export interface MappedEndpointSave {
  /** the save body; templateId is absent when an inline template is to be created with the endpoint */
  body: Record<string, unknown>;
  options: EndpointSaveOptions;
}

export function toEndpointSave(i: EndpointInput): MappedEndpointSave {
  if (str(i.hubReleaseId)) fail400('Hub releases are not available on this fleet; give a templateId.', ['$.input.hubReleaseId: not available']);
  if (i.modelReferences?.some((m) => m)) fail400('Model references are not available on this fleet.', ['$.input.modelReferences: not available']);
  if (i.instanceIds?.some((x) => x)) fail400('CPU serverless endpoints (instanceIds) are not offered on this fleet.', ['$.input.instanceIds: CPU endpoints are not offered']);
  const volumes = (i.networkVolumeIds ?? []).map((v) => str(v?.networkVolumeId)).filter((v): v is string => v !== undefined);
  if (volumes.length > 1) fail400('An endpoint mounts at most one network volume.', ['$.input.networkVolumeIds: at most one']);
  const b: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== null && v !== undefined) b[k] = v;
  };
  set('id', str(i.id));
  set('name', i.name);
  set('templateId', str(i.templateId));
  const gpus = list(i.gpuIds);
  if (gpus.length) b.gpuTypeIds = gpus;
  set('gpuCount', i.gpuCount);
  set('type', i.type ? (ENDPOINT_TYPES[i.type] ?? i.type) : undefined);
  set('computeType', str(i.computeType));
  set('workersMin', i.workersMin);
  set('workersMax', i.workersMax);
  set('idleTimeout', i.idleTimeout);
  set('scalerType', str(i.scalerType));
  set('scalerValue', i.scalerValue);
  set('networkVolumeId', str(i.networkVolumeId) ?? volumes[0]);
  const dcs = list(i.locations);
  if (dcs.length) b.dataCenterIds = dcs;
  set('allowedCudaVersions', cudaList(i.allowedCudaVersions));
  const options: EndpointSaveOptions = { minCudaVersion: minCudaVersion(i.minCudaVersion, 'endpoint') };
  const fb = str(i.flashBootType);
  if (fb !== undefined && fb !== 'OFF' && !fb.includes('FLASHBOOT')) fail422('endpoint', ['$.input.flashBootType: must be OFF, FLASHBOOT or PRIORITY_FLASHBOOT']);
  set('flashboot', i.flashboot ?? (fb === undefined ? undefined : fb !== 'OFF'));
  // Go clients send 0 for "unset"
  set('executionTimeoutMs', i.executionTimeoutMs || undefined);
  set('env', envObject(i.env));
  return { body: b, options };
}

/** EndpointTemplateInput → the v2 template body; the name defaults to the endpoint's, as on the public platform. */
function toTemplateBody(i: EndpointInput, t: NonNullable<EndpointInput['template']>): Record<string, unknown> {
  const env = envObject(t.env);
  return {
    name: t.name ?? `${i.name ?? 'endpoint'}__template`,
    ...(t.imageName ? { image: t.imageName } : {}),
    ...(t.containerDiskInGb ? { disk: t.containerDiskInGb } : {}),
    ...(t.dockerArgs ? { args: t.dockerArgs } : {}),
    ...(env ? { env } : {}),
  };
}

async function save(ctx: GqlContext, i: EndpointInput): Promise<EndpointRecord> {
  const { body, options } = toEndpointSave(i);
  if (body.templateId !== undefined || !i.template) return ctx.services.endpoints.save(ctx.principal, body, options);
  return (await ctx.services.endpoints.saveWithTemplate(ctx.principal, toTemplateBody(i, i.template), body, options)).endpoint;
}

export const endpointFields = {
  userId: (e: EndpointRecord) => e.accountId,
  computeType: () => 'GPU',
  template: (e: EndpointRecord, _a: unknown, ctx: GqlContext) => ctx.services.templates.get(ctx.principal, e.templateId).catch(() => null),
  gpuIds: (e: EndpointRecord) => e.gpuPools.join(','),
  instanceIds: () => [],
  workersStandby: () => 0,
  networkVolume: async (e: EndpointRecord, _a: unknown, ctx: GqlContext) =>
    e.networkVolumeId === null ? null : ((await ctx.services.store.get('networkVolumes', e.networkVolumeId)) ?? null),
  networkVolumeIds: async (e: EndpointRecord, _a: unknown, ctx: GqlContext) =>
    e.networkVolumeId === null
      ? []
      : [{ networkVolumeId: e.networkVolumeId, dataCenterId: (await ctx.services.store.get('networkVolumes', e.networkVolumeId))?.dataCenterId ?? null }],
  locations: (e: EndpointRecord) => (e.dataCenterIds.length ? e.dataCenterIds.join(',') : null),
  allowedCudaVersions: (e: EndpointRecord) => (e.allowedCudaVersions.length ? e.allowedCudaVersions.join(',') : null),
  minCudaVersion: () => null,
  flashBootType: (e: EndpointRecord) => (e.flashboot ? 'FLASHBOOT' : 'OFF'),
  modelReferences: () => [],
  env: (e: EndpointRecord) => Object.entries(e.env).map(([key, value]) => ({ key, value })),
  aiKey: () => null,
};

export const endpointResolvers = {
  User: {
    endpoints: (_: unknown, _a: unknown, ctx: GqlContext) => ctx.services.endpoints.list(ctx.principal),
  },
  Mutation: {
    saveEndpoint: (_: unknown, { input }: { input?: EndpointInput | null }, ctx: GqlContext) => save(ctx, required(input)),
    updateEndpointTemplate: (_: unknown, { input }: { input?: { endpointId?: string | null; id?: string | null; templateId?: string | null } | null }, ctx: GqlContext) => {
      const i = required(input);
      const id = str(i.endpointId) ?? str(i.id);
      const templateId = str(i.templateId);
      const errors = [...(id === undefined ? ['$.input.endpointId: is required'] : []), ...(templateId === undefined ? ['$.input.templateId: is required'] : [])];
      if (errors.length) fail422('endpoint', errors);
      return ctx.services.endpoints.update(ctx.principal, id!, { templateId });
    },
    deleteEndpoint: async (_: unknown, { id }: { id: string }, ctx: GqlContext) => {
      await ctx.services.endpoints.delete(ctx.principal, id);
      return null;
    },
  },
  Endpoint: endpointFields,
  FlashBootType: flashBootScalar,
};
