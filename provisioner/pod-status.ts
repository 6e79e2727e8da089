// Writes what the provisioner observed into a pod, but only if the user has not changed what they
// want since the provisioner decided: a stale observation must never overwrite a newer intention.
import { PROVISIONER_ACTOR, setConditions, settleMove, type ConditionUpdate, type PodConditionType, type PodRecord } from '../model/index.ts';
import type { Store } from '../store/index.ts';
import { accruePod } from '../core/index.ts';

export interface Intent {
  desiredStatus: PodRecord['desiredStatus'];
  specGeneration: number;
  restartGeneration: number;
  hostId: string | null;
}

export const intentOf = (p: PodRecord): Intent => ({
  desiredStatus: p.desiredStatus,
  specGeneration: p.specGeneration,
  restartGeneration: p.restartGeneration,
  hostId: p.hostId,
});

const sameIntent = (a: Intent, b: Intent) =>
  a.desiredStatus === b.desiredStatus && a.specGeneration === b.specGeneration && a.restartGeneration === b.restartGeneration && a.hostId === b.hostId;

/** What a provisioner write changes: fields, and the conditions it states (model/rules/pod-conditions.ts). */
export type ObservedChange = Partial<Omit<PodRecord, 'conditions'>> & { conditions?: ConditionUpdate<PodConditionType>[] };

/**
 * Applies `change` when the pod's intent is still `intent`; returns false when it moved on. Conditions
 * go through setConditions, so a write that only rewords one keeps its lastTransitionTime, and a
 * write that changes nothing is not made.
 */
export async function writeObserved(store: Store, podId: string, intent: Intent, change: (p: PodRecord) => ObservedChange): Promise<boolean> {
  return store.transact(async (tx) => {
    const pod = await tx.get('pods', podId);
    if (!pod || !sameIntent(intentOf(pod), intent)) return false;
    const now = new Date().toISOString();
    const { conditions, ...patch } = change(pod);
    // a moved pod that runs again (or stops) is billed from here on (model/records/pod-move.ts)
    const next: PodRecord = settleMove({ ...pod, ...patch });
    if (conditions) next.conditions = setConditions(pod.conditions, conditions, now);
    if (JSON.stringify(next) === JSON.stringify(pod)) return true;
    next.updatedAt = now;
    tx.put('pods', next);
    await accruePod(tx, pod, next, now);
    return true;
  }, { actor: PROVISIONER_ACTOR });
}
