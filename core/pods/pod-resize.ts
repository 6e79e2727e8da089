// Changes that recreate a running pod's container without losing it (docs/pods.md#resizing-in-place):
// a gpu.count change is planned again with the pod's own allocation counted as free (its host first,
// then any host unless its storage pins it), in the update's one transaction, so a refusal leaves the
// pod exactly as it was; and the words a pod shows while a change waits for its new container.
import { GpufleetError, isGpufleetError, podConditions, setConditions, type PodRecord } from '../../model/index.ts';
import type { StoreTx } from '../../store/index.ts';
import type { Placement, Placer, PodPlacementRequest } from '../hosts/index.ts';
import { containerFieldsChanged } from './pod-builder.ts';

/** The answer of `POST /v2/pods?dryRun=true`: where the pod would go, and what it would cost. */
export interface DryRunPlacement {
  dryRun: true;
  /** the host it would take (the pod view's machineId) */
  machineId: string;
  dataCenterId: string;
  cloud: string;
  gpu: { id: string; count: number } | null;
  costPerHr: number;
  cudaVersion: string | null;
  /** the pod whose compute and name were counted as free (`replaces`), or null */
  replaces: string | null;
  /** interruptible pods of other work the create would preempt to take their GPUs (none is preempted by the dry run) */
  wouldPreempt: number;
}

export function dryRunAnswer(draft: PodRecord, placement: Placement, replaces: string | undefined): DryRunPlacement {
  return {
    dryRun: true,
    machineId: placement.hostId,
    dataCenterId: placement.dataCenterId,
    cloud: placement.cloud,
    gpu: draft.gpu ? { id: draft.gpu.id, count: draft.gpu.count } : null,
    costPerHr: placement.costPerHr,
    cudaVersion: placement.cudaVersion,
    replaces: replaces ?? null,
    wouldPreempt: placement.wouldPreempt ?? 0,
  };
}

/** Whether a PATCH's gpu.count changes the pod (a CPU pod has no GPUs to change: 422). */
export function resizes(pod: PodRecord, count: number): boolean {
  if (!pod.gpu)
    throw new GpufleetError('VALIDATION_FAILED', `Pod ${pod.id} is a CPU pod; it has no GPU count to change.`, { errors: ['$.gpu: the pod has no GPUs'] });
  return pod.gpu.count !== count;
}

const REFUSALS = new Set(['CAPACITY_UNAVAILABLE', 'PLACEMENT_IMPOSSIBLE']);

/**
 * `next` (the PATCH applied) with `count` GPUs. A pod holding compute is placed again with its own
 * allocation free, on its own host when that has room, else (no persistent storage) on any host that
 * fits; a refusal throws the placement's error and the caller's transaction writes nothing. A pod
 * holding nothing takes the count at its next start.
 */
export async function resizeInPlace(tx: StoreTx, placer: Placer, pod: PodRecord, next: PodRecord, count: number, now: string): Promise<PodRecord> {
  const resized: PodRecord = { ...next, gpu: { ...pod.gpu!, count } };
  if (!pod.allocated || !pod.hostId) return resized;
  const volumeDc = await networkVolumeDataCenter(tx, pod);
  const req: PodPlacementRequest = { pod: resized, pinnedHostId: pod.hostId, dataCenterIds: volumeDc ? [volumeDc] : pod.dataCenterIds, replacing: pod.id };
  let placement: Placement;
  try {
    placement = await placer.place(tx, req);
  } catch (e) {
    if (pod.mounts.persistent || !isGpufleetError(e) || !REFUSALS.has(e.code)) throw e;
    placement = await placer.place(tx, { ...req, pinnedHostId: null });
  }
  const moved = placement.hostId !== pod.hostId ? ` (moved from host ${pod.hostId}: its own has no room)` : '';
  return {
    ...resized,
    ...placement,
    allocated: true,
    statusReason: `resizing to ${count} GPU(s): recreating the container on host ${placement.hostId}${moved}`,
    conditions: setConditions(pod.conditions, [podConditions.placed(placement.hostId), podConditions.resizing(count, placement.hostId)], now),
  };
}

/** A running pod whose container is recreated by a change: the reason and condition say so until the new one runs. */
export function changeInProgress(before: PodRecord, next: PodRecord, now: string): PodRecord {
  if (!next.allocated || before.status !== 'RUNNING') return next;
  const fields = containerFieldsChanged(before, next);
  return {
    ...next,
    statusReason: `applying the change to ${fields.join(', ')}: the old container runs until the new one has started`,
    conditions: setConditions(before.conditions, [podConditions.updating()], now),
  };
}

export async function networkVolumeDataCenter(tx: StoreTx, pod: PodRecord): Promise<string | null> {
  const volumeId = pod.mounts.network?.[0]?.volumeId;
  if (!volumeId) return null;
  return (await tx.get('networkVolumes', volumeId))?.dataCenterId ?? null;
}
