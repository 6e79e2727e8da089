// What the pod service needs from the fleet: a placement for a pod, planned and verified inside the
// pod's transaction (plan then apply, docs/placement.md), so two concurrent creates never take the same GPU.
import type { CloudTier } from '../../model/index.ts';
import type { PodRecord } from '../../model/index.ts';
import type { StoreTx } from '../../store/index.ts';

export interface Placement {
  hostId: string;
  dataCenterId: string;
  gpuUuids: string[];
  cloud: CloudTier;
  costPerHr: number;
  reservedVcpu: number;
  reservedMemoryGb: number;
  cudaVersion: string | null;
  /** an interruptible pod's bid as placed: its own, or the floor of the tier it landed in (bids.ts) */
  bidPerGpu?: number;
  /** a dry run's placement only: how many interruptible pods the real create would preempt (none was) */
  wouldPreempt?: number;
}

export interface PodPlacementRequest {
  pod: PodRecord;
  /** the pod's storage lives on this host (persistent mount), so it must run there */
  pinnedHostId: string | null;
  /** hosts it must not go to (a pod moving off a host with a failed GPU prefers the others) */
  avoidHostIds?: string[];
  /** data centers the pod may use (its own constraint narrowed by a network volume's data center) */
  dataCenterIds: string[];
  /** GraphQL's cloudType ALL lets the scheduler pick the tier; otherwise the pod's own `cloud` */
  cloud?: CloudTier | 'ALL';
  /** GPU types acceptable in priority order (serverless workers); default: the pod's own `gpu.id` */
  gpuTypeIds?: string[];
  /** vCPUs and memory a GPU pod asks for beside its GPUs (GraphQL minVcpuCount/minMemoryInGb) */
  minVcpu?: number;
  minMemoryGb?: number;
  /**
   * a pod whose current allocation is free for this placement: the pod itself when it is resized in
   * place, or the pod a stack would replace (a dry run); its GPUs, vCPU, memory and disk count as free
   */
  replacing?: string;
  /**
   * a dry run (POST /v2/pods?dryRun=true, a stack's plan): the placement is answered, with the
   * evictions it would need counted in `wouldPreempt`, but no pod is preempted; the caller writes nothing
   */
  dryRun?: boolean;
}

export interface Placer {
  /**
   * Plans the pod on a host, verifies the plan against `tx` (planning again when it went stale) and
   * answers the placement the caller writes with the pod, or throws PLACEMENT_IMPOSSIBLE (nothing in the fleet could ever fit, naming the
   * constraint) or CAPACITY_UNAVAILABLE (it fits, but the capacity is taken now).
   */
  place(tx: StoreTx, request: PodPlacementRequest): Promise<Placement>;
}
