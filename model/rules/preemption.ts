// What preemption does to the interruptible pod that gives its GPUs back (docs/teams.md "Interruptible
// pods"): it is stopped like a user's stop (EXITED, compute released, volume and container disk kept),
// with a reason that says "preempted" and a condition, and the grace its container gets between
// SIGTERM and SIGKILL. The event `pod.preempted` is derived from this write (status-events.ts).
import type { PodPreemption, PodRecord } from '../records/pod.ts';
import { podConditions } from './pod-conditions.ts';
import { setConditions } from './conditions.ts';

/** GPUFLEET_PREEMPT_GRACE: the public platform's 5 s by default, at most 120 s */
export const DEFAULT_PREEMPT_GRACE_S = 5;
export const MAX_PREEMPT_GRACE_S = 120;

const CAUSE_WORDS: Record<PodPreemption['cause'], string> = {
  'on-demand': 'an on-demand pod needed its GPUs',
  'higher-bid': 'a higher bid needed its GPUs',
};

export function preemptionReason(p: PodPreemption): string {
  return `preempted: ${CAUSE_WORDS[p.cause]}; the container gets SIGTERM, then SIGKILL after ${p.graceSeconds} s; volume and disk are kept`;
}

/** The victim's next version, written in the transaction that places the pod taking its GPUs. */
export function preemptedPod(pod: PodRecord, cause: PodPreemption['cause'], graceSeconds: number, now: string): PodRecord {
  const preemption: PodPreemption = { at: now, cause, graceSeconds };
  return {
    ...pod,
    status: 'EXITED',
    desiredStatus: 'EXITED',
    statusReason: preemptionReason(preemption),
    allocated: false,
    gpuUuids: [],
    preemption,
    conditions: setConditions(pod.conditions, [podConditions.released('preempted'), podConditions.preempted(graceSeconds)], now),
    updatedAt: now,
  };
}
