// What a placed pod holds on its host, and whether a host's pods fit it, with the scheduler's own
// accounting: the one rule a plan is verified with before it is applied (docs/placement.md). The
// placer records `allocationOf` for every pod it knows and verifies its plan with `verifyPlan` inside
// the pod's transaction (both stores); the PostgreSQL store applies the same `hostLoadConflict` again
// under the host's lock at commit (store/pg/host-capacity.ts).
import type { HostRecord, PodRecord } from '../model/index.ts';
import { isInterruptible } from '../model/index.ts';
import type { HostLoadRule } from '../store/index.ts';
import type { Allocation, PlacementConstraint } from './placement.ts';
import type { PlacementPlan } from './placement-plan.ts';
import { Scheduler } from './scheduler.ts';

/**
 * the disk a pod takes on its host: its container disk and its persistent volume (a record without
 * them, written straight into a store, takes none rather than failing the transaction that reads it)
 */
export const podDiskGb = (pod: PodRecord): number => (pod.disk ?? 0) + (pod.mounts?.persistent?.size ?? 0);

/** What a placed pod holds on its host (GPUs, vCPU, memory, disk), or null when it holds nothing. */
export function allocationOf(pod: PodRecord): Allocation | null {
  if (!pod.allocated || !pod.hostId) return null;
  const a: Allocation = {
    podId: pod.id,
    hostId: pod.hostId,
    gpuUuids: pod.gpuUuids,
    vcpu: pod.cpu?.vcpuCount ?? pod.reservedVcpu ?? 0,
    memoryGb: pod.cpu?.memory ?? pod.reservedMemoryGb ?? 0,
    diskGb: podDiskGb(pod),
  };
  // an interruptible pod can be preempted by anything bidding more (fleet/preemption.ts)
  if (isInterruptible(pod) && typeof pod.bidPerGpu === 'number') {
    a.bid = pod.bidPerGpu;
    a.startedAtMs = Date.parse(pod.startedAt ?? pod.createdAt) || 0;
  }
  return a;
}

/** Whether two allocations hold the same things (a pod's write that changed neither its host, GPUs nor resources). */
export const sameAllocation = (a: Allocation, b: Allocation): boolean =>
  a.hostId === b.hostId && a.gpuUuids.join() === b.gpuUuids.join() && a.vcpu === b.vcpu && a.memoryGb === b.memoryGb && a.diskGb === b.diskGb &&
  a.bid === b.bid && a.startedAtMs === b.startedAtMs;

/**
 * The resource that the placed pods among `pods` take more of on `host` than it has: 'cpu-memory'
 * (vCPU or memory) or 'disk'; null when they fit. The scheduler subtracts them as it does for placing.
 */
export function overcommitOf(host: HostRecord, pods: readonly PodRecord[]): 'cpu-memory' | 'disk' | null {
  const allocations = pods.map(allocationOf).filter((a): a is Allocation => a !== null && a.hostId === host.id);
  return new Scheduler([host], allocations).overcommit(host.id);
}

/** Why a host's placed pods do not fit it: a GPU held twice or not on the host, or too much vCPU/memory or disk. `detail` names no pod (it may reach another account). */
export interface HostConflict {
  hostId: string;
  constraint: Extract<PlacementConstraint, 'gpu-count' | 'cpu-memory' | 'disk'>;
  detail: string;
}

/**
 * The one rule: whether `allocations` (every placed pod on the host, a plan's included) fit `host`.
 * Each GPU is held by one pod at most and is on the host; vCPU, memory and disk as the scheduler counts them.
 */
export function allocationConflict(host: HostRecord, allocations: readonly Allocation[]): HostConflict | null {
  const onHost = allocations.filter((a) => a.hostId === host.id);
  const gpus = new Set(host.facts.gpus.map((g) => g.uuid));
  const holder = new Map<string, string>();
  for (const a of onHost)
    for (const uuid of a.gpuUuids) {
      const other = holder.get(uuid);
      if (other !== undefined && other !== a.podId)
        return { hostId: host.id, constraint: 'gpu-count', detail: `GPU ${uuid} of host ${host.id} is held by another pod` };
      if (!gpus.has(uuid)) return { hostId: host.id, constraint: 'gpu-count', detail: `GPU ${uuid} is not on host ${host.id}` };
      holder.set(uuid, a.podId);
    }
  const excess = new Scheduler([host], onHost.map((a) => ({ ...a, gpuUuids: [] }))).overcommit(host.id);
  if (!excess) return null;
  return { hostId: host.id, constraint: excess, detail: `the pods placed on host ${host.id} take more ${excess === 'disk' ? 'disk' : 'vCPU or memory'} than it has` };
}

/** `allocationConflict` over pod records (what the stores hold). */
export function hostLoadConflict(host: HostRecord, pods: readonly PodRecord[]): HostConflict | null {
  return allocationConflict(host, pods.map(allocationOf).filter((a): a is Allocation => a !== null));
}

/** What verifying a plan reads: a host, and the placed pods on it, as the applying transaction sees them. */
export interface PlanView {
  host(hostId: string): Promise<HostRecord | undefined>;
  placedPods(hostId: string): Promise<readonly PodRecord[]>;
}

/**
 * Re-checks every host the plan adds load to, as `view` sees it now, with the plan's placements in place
 * of what their pods held before: the conflicts found (a host gone counts as one), none when it may apply.
 */
export async function verifyPlan(plan: PlacementPlan, view: PlanView): Promise<HostConflict[]> {
  const conflicts: HostConflict[] = [];
  const planned = new Set(plan.placements.map((p) => p.podId));
  const evicted = new Map(plan.evictions.map((e) => [e.podId, e]));
  for (const hostId of [...new Set(plan.placements.map((p) => p.hostId))].sort()) {
    const host = await view.host(hostId);
    if (!host) {
      conflicts.push({ hostId, constraint: 'gpu-count', detail: `host ${hostId} is no longer enrolled` });
      continue;
    }
    // a GPU in FAILURE takes no new pod (docs/gpu-health.md): the index may not know yet
    const failed = new Set(host.facts.gpus.filter((g) => g.health === 'FAILURE').map((g) => g.uuid));
    const onFailed = plan.placements.find((p) => p.hostId === hostId && p.gpuUuids.some((u) => failed.has(u)));
    if (onFailed) {
      conflicts.push({ hostId, constraint: 'gpu-count', detail: `a GPU of host ${hostId} the plan chose is in FAILURE` });
      continue;
    }
    const placed = await view.placedPods(hostId);
    // a pod the plan preempts leaves with the plan, if it still is what was chosen: interruptible, at that bid
    const changed = placed.find((p) => evicted.has(p.id) && p.allocated && (!isInterruptible(p) || p.bidPerGpu !== evicted.get(p.id)!.bidPerGpu));
    if (changed) {
      conflicts.push({ hostId, constraint: 'gpu-count', detail: `a pod the plan would preempt on host ${hostId} is no longer interruptible at the bid it was chosen at` });
      continue;
    }
    const others = placed.filter((p) => !planned.has(p.id) && !evicted.has(p.id)).map(allocationOf);
    const allocations = [...others.filter((a): a is Allocation => a !== null), ...plan.placements];
    const conflict = allocationConflict(host, allocations);
    if (conflict) conflicts.push(conflict);
  }
  return conflicts;
}

/** The rule the PostgreSQL store re-checks a host with at commit (PgStoreOptions.hostLoad). */
export const hostLoadRule: HostLoadRule = { holds: allocationOf, conflict: hostLoadConflict };
