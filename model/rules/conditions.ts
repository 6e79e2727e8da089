// The one way a condition is written (model/records/condition.ts): every writer of pods and hosts
// states the condition it knows, and this keeps `lastTransitionTime` right: it moves only when the
// condition's status changes, not when its reason or message does.
import type { Condition, ConditionUpdate } from '../records/condition.ts';

const REASON = /^[A-Z][A-Za-z0-9]*$/;

/**
 * `list` with `update` set: a condition of a type not there yet is added (at the end), one whose
 * status changed takes `now` as its transition time, one whose status held keeps its time and takes
 * the new reason and message. Records from before conditions existed have none (`undefined`).
 */
export function setCondition<T extends string>(list: readonly Condition<T>[] | undefined, update: ConditionUpdate<T>, now: string): Condition<T>[] {
  if (!REASON.test(update.reason)) throw new Error(`condition reason "${update.reason}" is not one CamelCase word`);
  const out = [...(list ?? [])];
  const i = out.findIndex((c) => c.type === update.type);
  const prior = i >= 0 ? out[i] : undefined;
  const lastTransitionTime = prior && prior.status === update.status ? prior.lastTransitionTime : now;
  const next: Condition<T> = { type: update.type, status: update.status, reason: update.reason, message: update.message, lastTransitionTime };
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

/** Several conditions set in order (a later one of the same type wins). */
export function setConditions<T extends string>(list: readonly Condition<T>[] | undefined, updates: readonly ConditionUpdate<T>[], now: string): Condition<T>[] {
  return updates.reduce<Condition<T>[]>((acc, u) => setCondition(acc, u, now), [...(list ?? [])]);
}

/** The condition of that type, if the record has one. */
export function conditionOf<T extends string>(list: readonly Condition<T>[] | undefined, type: T): Condition<T> | undefined {
  return list?.find((c) => c.type === type);
}
