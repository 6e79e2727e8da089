// A new worker as a pod record: the endpoint's template (image, args, disk, ports, registry; another
// account's public template as the endpoint pinned it, template-pins.ts), the
// template's env under the endpoint's, the endpoint's GPU count, CUDA versions and network volume;
// placed by the same placer as pods, over the endpoint's GPU types in priority order.
import { unplaced } from '../../model/index.ts';
import { randomBytes } from 'node:crypto';
import type { EndpointRecord, PodRecord, WorkerPod } from '../../model/index.ts';
import type { WorkerTemplate } from '../endpoints/index.ts';
import type { SecretBox, StoreTx } from '../../store/index.ts';
import type { Placer } from '../hosts/index.ts';
import { endpointDataCenters } from '../endpoints/index.ts';
import { newWorkerToken, tokenSealContext } from './worker-token.ts';

/** Where a serverless worker sees its endpoint's network volume, as on the public platform. */
export const WORKER_VOLUME_PATH = '/runpod-volume';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 14 lowercase alphanumerics, like pod ids (a worker id is a pod id and a URL path segment). */
export function newWorkerId(): string {
  let id = '';
  for (const b of randomBytes(14)) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

/** The worker's record before placement: status PROVISIONING, nothing allocated. */
export function workerDraft(e: EndpointRecord, t: WorkerTemplate, id: string, seal: SecretBox, now: string): WorkerPod {
  const { token, hash } = newWorkerToken(id);
  return {
    id,
    accountId: e.accountId,
    name: `${e.name}-${id.slice(0, 6)}`,
    image: t.image,
    args: t.args,
    disk: t.disk,
    // a load-balancing worker publishes nothing: only the gateway reaches it (docs/gateway.md)
    ports: e.type === 'LOAD_BALANCER' ? [] : t.ports,
    env: { ...t.env, ...e.env },
    registry: t.registry,
    mounts: e.networkVolumeId ? { network: [{ volumeId: e.networkVolumeId, path: WORKER_VOLUME_PATH }] } : {},
    gpu: { id: e.gpuTypeIds[0] ?? '', count: e.gpuCount },
    cloud: 'SECURE',
    locked: false,
    template: t.id,
    status: 'PROVISIONING',
    statusReason: 'placing worker',
    desiredStatus: 'RUNNING',
    dataCenterIds: e.dataCenterIds,
    allowedCudaVersions: e.allowedCudaVersions.length ? e.allowedCudaVersions : t.allowedCudaVersions,
    ...unplaced(),
    tags: {},
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    terminatedAt: null,
    endpointId: e.id,
    worker: {
      version: e.version,
      tokenHash: hash,
      tokenSealed: seal.seal(token, tokenSealContext(id)),
      readyAt: null,
      retiredReason: null,
      failed: false,
    },
  };
}

/**
 * Places a worker inside the caller's transaction: the first of the endpoint's GPU types that fits
 * now wins. Throws CAPACITY_UNAVAILABLE or PLACEMENT_IMPOSSIBLE like pod creation.
 */
export async function placeWorker(tx: StoreTx, placer: Placer, e: EndpointRecord, draft: WorkerPod): Promise<WorkerPod> {
  const placement = await placer.place(tx, {
    pod: draft,
    pinnedHostId: null,
    dataCenterIds: await endpointDataCenters(tx, e),
    cloud: e.cloud,
    gpuTypeIds: e.gpuTypeIds,
  });
  // the type of the GPUs placed, from the host's facts (the placer priced that type)
  const host = await tx.get('hosts', placement.hostId);
  const typeId = host?.facts.gpus.find((g) => g.uuid === placement.gpuUuids[0])?.typeId ?? draft.gpu!.id;
  const placed: PodRecord = {
    ...draft,
    ...placement,
    gpu: { id: typeId, count: e.gpuCount },
    allocated: true,
    statusReason: `placed on host ${placement.hostId}; waiting for the provisioner to pull and start it`,
  };
  return placed as WorkerPod;
}
