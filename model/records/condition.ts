// Status conditions, in the manner of Kubernetes: beside a record's `status` (one word) and
// `statusReason` (the sentence a user reads), each condition says one thing that is true or not of
// the record now, why (a CamelCase reason), in our words (never a daemon's, a registry's or a
// host's output), and since when its status has held. docs/pods.md and docs/fleet.md list them.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition<T extends string = string> {
  type: T;
  status: ConditionStatus;
  /** one CamelCase word: Placed, PullFailed, Drained, ... */
  reason: string;
  /** a sentence in our words, safe for the record's owner to read */
  message: string;
  /** when `status` last changed (not when the reason or message did) */
  lastTransitionTime: string;
}

export type PodConditionType = 'Scheduled' | 'ImageReady' | 'ContainerRunning' | 'Moved';
export type HostConditionType = 'Reachable' | 'Schedulable' | 'GpusHealthy' | 'ContainersStuck';
export type PodCondition = Condition<PodConditionType>;
export type HostCondition = Condition<HostConditionType>;

/** A condition as a writer states it: the helper (model/rules/conditions.ts) keeps the time. */
export type ConditionUpdate<T extends string = string> = Omit<Condition<T>, 'lastTransitionTime'>;
