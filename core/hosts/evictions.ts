// Applying a plan's evictions (docs/placement.md): each interruptible pod the plan preempts is stopped
// in the transaction that places the pod taking its GPUs (model/rules/preemption.ts), so the commit
// (and on PostgreSQL the per-host check under its lock) sees its GPUs released and billing closes.
// Its container is stopped by the provisioner, SIGTERM then SIGKILL after the grace, before the new
// pod's container may start on those GPUs (provisioner/gpu-handover.ts).
import type { PlacementPlan } from '../../fleet/index.ts';
import { preemptedPod, type PodPreemption } from '../../model/index.ts';
import type { StoreTx } from '../../store/index.ts';
import { accruePod } from '../billing/index.ts';

export async function applyEvictions(tx: StoreTx, plan: PlacementPlan, cause: PodPreemption['cause'], graceSeconds: number): Promise<void> {
  if (plan.evictions.length === 0) return;
  const now = new Date().toISOString();
  for (const e of plan.evictions) {
    const victim = await tx.get('pods', e.podId);
    // verifyPlan checked it is still interruptible at that bid; one that left already has nothing to give back
    if (!victim || !victim.allocated || victim.hostId !== e.hostId) continue;
    const next = preemptedPod(victim, cause, graceSeconds, now);
    tx.put('pods', next);
    await accruePod(tx, victim, next, now);
  }
}
