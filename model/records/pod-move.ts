// A pod moved off its host, keeping its id (docs/gpu-health.md, "Acting on it"): why, from where to where, since when.
// The gap between the failure and the pod running again is not billed: a pod with a move that is not
// settled holds compute without being charged for it (billable(), below).
import { holdsCompute } from './pod-state-machine.ts';
import type { PodStatus } from './pod-status.ts';

/** what made the pod leave its host */
export type MoveCause = 'gpu-failure' | 'drain' | 'host-lost';

export interface PodMove {
  cause: MoveCause;
  /** our words for the cause: "Xid 79 on GPU-…", "host … drained with a deadline", "host … lost" */
  detail: string;
  fromHostId: string;
  /** the host the move placed it on; null while it waits for a free GPU of its type */
  toHostId: string | null;
  /** when the failure happened (or the drain took the pod): billing stops from here */
  since: string;
  /** false until the pod runs again on its new host (or stops): the gap is unbilled */
  settled: boolean;
}

/** A pod that costs money now: it holds compute and is not between a failure and running again. */
export function billable(pod: { status: PodStatus; allocated: boolean; move?: PodMove | undefined }): boolean {
  return holdsCompute(pod.status) && pod.allocated && !(pod.move && !pod.move.settled);
}

/** The move with `settled` set once the pod runs again or no longer wants to run. */
export function settleMove<T extends { status: PodStatus; desiredStatus: string; move?: PodMove | undefined }>(pod: T): T {
  if (!pod.move || pod.move.settled) return pod;
  if (pod.status === 'RUNNING' || pod.desiredStatus !== 'RUNNING') return { ...pod, move: { ...pod.move, settled: true } };
  return pod;
}
