// Turns a validated create request into a pod record: template fields first, the body's fields over
// them, then defaults; then the rules that need other records (catalogs, template, volume, registry).
import type { PodCreateInput } from '../../model/index.ts';
import { unplaced, type PodRecord } from '../../model/index.ts';
import { fail400, fail422 } from '../../model/index.ts';
import { checkPodShape } from '../../model/index.ts';
import { gpuTypeById } from '../../fleet/index.ts';
import { validateCpuConfig } from '../../fleet/index.ts';
import type { StoreTx } from '../../store/index.ts';
import { checkRegistry } from '../images/index.ts';
import type { Principal } from '../../model/index.ts';

export const POD_DEFAULTS = { args: '', disk: 20, cloud: 'SECURE', locked: false } as const;

export async function buildPodRecord(
  tx: StoreTx,
  principal: Principal,
  input: PodCreateInput,
  id: string,
  now: string,
): Promise<{ pod: PodRecord; networkVolumeDc: string | null }> {
  let template = null;
  if (input.templateId !== undefined) {
    template = await tx.get('templates', input.templateId);
    if (!template || (template.accountId !== principal.accountId && !template.public))
      fail422('pod', [`$.templateId: template ${input.templateId} not found`]);
  }
  const image = input.image ?? template?.image;
  const gpu = input.gpu ? { id: input.gpu.id, count: input.gpu.count ?? 1 } : undefined;
  const cpu = input.cpu;
  const mounts = input.mounts ?? (template?.mounts.persistent && gpu ? { persistent: template.mounts.persistent } : {});

  // docs/validation.md: every field rule (422) before the cross-resource rules (400)
  const errors: string[] = [];
  if (gpu && !gpuTypeById(gpu.id)) errors.push(`$.gpu.id: unknown GPU type "${gpu.id}" (see GET /v2/catalog/gpus)`);
  if (cpu) errors.push(...validateCpuConfig(cpu));
  if (errors.length) fail422('pod', errors);

  let networkVolumeDc: string | null = null;
  const netMount = mounts.network?.[0];
  if (netMount) {
    const vol = await tx.get('networkVolumes', netMount.volumeId);
    if (!vol || vol.accountId !== principal.accountId)
      fail422('pod', [`$.mounts.network[0].volumeId: network volume ${netMount.volumeId} not found`]);
    networkVolumeDc = vol.dataCenterId;
  }
  const registry = await checkRegistry(tx, principal, input.registry ?? template?.registry ?? null);
  checkPodShape({ image, gpu, cpu, mounts });

  if (networkVolumeDc && input.dataCenterIds?.length && !input.dataCenterIds.includes(networkVolumeDc))
    fail400(`Network volume ${netMount!.volumeId} is in data center ${networkVolumeDc}, which dataCenterIds excludes.`, [
      '$.mounts.network[0].volumeId: volume is in another data center',
    ]);

  const pod: PodRecord = {
    id,
    accountId: principal.accountId,
    name: input.name,
    image: image!, // checkPodShape refused a pod without one
    args: input.args ?? template?.args ?? POD_DEFAULTS.args,
    disk: input.disk ?? template?.disk ?? POD_DEFAULTS.disk,
    ports: input.ports ?? template?.ports ?? [],
    env: { ...(template?.env ?? {}), ...(input.env ?? {}) },
    registry,
    mounts,
    cloud: input.cloud ?? POD_DEFAULTS.cloud,
    locked: input.locked ?? POD_DEFAULTS.locked,
    template: template?.id ?? null,
    status: 'PROVISIONING',
    statusReason: 'placing pod',
    desiredStatus: 'RUNNING',
    dataCenterIds: input.dataCenterIds ?? [],
    allowedCudaVersions: input.gpu?.allowedCudaVersions ?? template?.allowedCudaVersions ?? [],
    ...unplaced(),
    tags: input.tags ?? {},
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    terminatedAt: null,
  };
  if (gpu) pod.gpu = gpu;
  else if (cpu) pod.cpu = cpu;
  // the bid's default (the type's spot floor) is the placer's: it knows the price book
  if (input.interruptible === true) Object.assign(pod, { interruptible: true, bidPerGpu: input.bidPerGpu ?? null });
  return { pod, networkVolumeDc };
}

const CONTAINER_FIELDS = ['image', 'args', 'disk', 'ports', 'env', 'registry'] as const;

/** A change to these recreates the container (the container disk is ephemeral, so nothing is lost that the spec keeps). */
export function containerConfigChanged(a: PodRecord, b: PodRecord): boolean {
  return containerFieldsChanged(a, b).length > 0;
}

/** The fields whose change recreates the container, among those that differ. */
export function containerFieldsChanged(a: PodRecord, b: PodRecord): string[] {
  return CONTAINER_FIELDS.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
}

