// Plan, then apply (docs/placement.md): the scheduler proposes from its snapshot, the commit re-checks.
// A plan says where each pod goes (placements), what would have to leave a host for it (evictions:
// interruptible pods preempted, docs/teams.md), and for each pod that cannot go anywhere the failure and
// which constraint excluded each host (computed only then: the hot path never pays for it).
import type { PlacementConstraint, PlacementFailure, PlacementRequest } from './placement.ts';

/** One pod to place. */
export interface PlanRequest {
  podId: string;
  request: PlacementRequest;
}

/** Where a pod goes and what it takes there: the allocation the commit re-checks. */
export interface PlannedPlacement {
  podId: string;
  hostId: string;
  dataCenterId: string;
  gpuUuids: string[];
  /** null for CPU pods */
  gpuTypeId: string | null;
  vcpu: number;
  memoryGb: number;
  diskGb: number;
}

/**
 * A pod that must leave its host for the plan: an interruptible pod preempted (fleet/preemption.ts) by
 * the plan's pod `forPodId`. The commit re-checks that it still holds what it held at this bid.
 */
export interface PlannedEviction {
  podId: string;
  hostId: string;
  /** the placement it makes room for */
  forPodId: string;
  /** the victim's bid when it was chosen */
  bidPerGpu: number;
  reason: 'preempted';
}

/** The hosts one constraint excluded, at most HOST_IDS_SHOWN of their ids named. */
export interface HostExclusion {
  constraint: PlacementConstraint;
  hostCount: number;
  hostIds: string[];
}

/** A pod no host can take now: today's diagnosis, and every enrolled host's reason grouped by constraint. */
export interface PlacementRefusal {
  podId: string;
  failure: PlacementFailure;
  hosts: HostExclusion[];
}

export interface PlacementPlan {
  placements: PlannedPlacement[];
  evictions: PlannedEviction[];
  refusals: PlacementRefusal[];
}

/** how many host ids a refusal names per constraint (the count says how many there are) */
export const HOST_IDS_SHOWN = 20;

/** The hosts a plan adds load to, in id order (the order the commit locks them in). */
export function hostsTouched(plan: PlacementPlan): string[] {
  return [...new Set(plan.placements.map((p) => p.hostId))].sort();
}
