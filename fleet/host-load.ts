// What a placed pod holds on its host, and whether a host's pods fit it, with the scheduler's own
// accounting. The placer records `allocationOf` for every pod it knows; the PostgreSQL store re-checks
// a host's whole load at commit with `overcommitOf` (store/pg/host-capacity.ts): one rule for both.
import type { HostRecord, PodRecord } from '../model/index.ts';
import type { HostLoadRule } from '../store/index.ts';
import type { Allocation } from './placement.ts';
import { Scheduler } from './scheduler.ts';

/**
 * the disk a pod takes on its host: its container disk and its persistent volume (a record without
 * them, written straight into a store, takes none rather than failing the transaction that reads it)
 */
export const podDiskGb = (pod: PodRecord): number => (pod.disk ?? 0) + (pod.mounts?.persistent?.size ?? 0);

/** What a placed pod holds on its host (GPUs, vCPU, memory, disk), or null when it holds nothing. */
export function allocationOf(pod: PodRecord): Allocation | null {
  if (!pod.allocated || !pod.hostId) return null;
  return {
    podId: pod.id,
    hostId: pod.hostId,
    gpuUuids: pod.gpuUuids,
    vcpu: pod.cpu?.vcpuCount ?? pod.reservedVcpu ?? 0,
    memoryGb: pod.cpu?.memory ?? pod.reservedMemoryGb ?? 0,
    diskGb: podDiskGb(pod),
  };
}

/** Whether two allocations hold the same things (a pod's write that changed neither its host, GPUs nor resources). */
export const sameAllocation = (a: Allocation, b: Allocation): boolean =>
  a.hostId === b.hostId && a.gpuUuids.join() === b.gpuUuids.join() && a.vcpu === b.vcpu && a.memoryGb === b.memoryGb && a.diskGb === b.diskGb;

/**
 * The resource that the placed pods among `pods` take more of on `host` than it has: 'cpu-memory'
 * (vCPU or memory) or 'disk'; null when they fit. The scheduler subtracts them as it does for placing.
 */
export function overcommitOf(host: HostRecord, pods: readonly PodRecord[]): 'cpu-memory' | 'disk' | null {
  const allocations = pods.map(allocationOf).filter((a): a is Allocation => a !== null && a.hostId === host.id);
  return new Scheduler([host], allocations).overcommit(host.id);
}

/** The rule the PostgreSQL store re-checks a host with at commit (PgStoreOptions.hostLoad). */
export const hostLoadRule: HostLoadRule = { holds: allocationOf, overcommit: overcommitOf };
