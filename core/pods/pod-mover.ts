// Moving a pod off its host, keeping its id (docs/gpu-health.md, "Acting on it"): a server-side operation of its own,
// never a fresh create (so nothing that guards creates, such as an account's quota, refuses it). The
// pod is planned and applied like any placement (FleetPlacer: plan, verify inside the transaction,
// commit; docs/placement.md) on a healthy GPU of its own type in its own data center; the host it
// leaves is drained, unreachable or has the failed GPU out of placement, so the plan never picks it.
// The caller (the provisioner) stops the old container first where the host answers; this writes
// the records only. Billing stops at the failure (`since`) and starts again when the pod runs.
import {
  isGpufleetError,
  podConditions as cond,
  PROVISIONER_ACTOR,
  setConditions,
  settleMove,
  type MoveCause,
  type MoveReason,
  type PodMove,
  type PodRecord,
} from '../../model/index.ts';
import type { Store, StoreTx } from '../../store/index.ts';
import { accruePod } from '../billing/index.ts';
import type { Placer } from '../hosts/index.ts';

export interface MoveOrder {
  podId: string;
  /** the host the pod is on now; a pod found elsewhere (moved already, by another replica) is left alone */
  fromHostId: string;
  cause: MoveCause;
  /** the cause in our words: "Xid 79 on GPU-…", "host … drained", "host … lost" */
  detail: string;
  /** when the failure happened: billing stops from here */
  since: string;
  /** the host is confirmed gone (an operator said so): pods with a network volume move too */
  hostGone?: boolean;
}

export type MoveOutcome =
  /** placed on another host; PROVISIONING there */
  | { kind: 'moved'; toHostId: string }
  /** no healthy GPU of its type is free: PROVISIONING with the reason, placed by a later retry */
  | { kind: 'waiting'; reason: string }
  /** its persistent volume is on the host: EXITED with the reason (start places it there again) */
  | { kind: 'exited' }
  /** a network volume on a lost host not yet confirmed gone: stays until an operator says so */
  | { kind: 'held' }
  /** not on that host any more, or not running there: nothing done */
  | { kind: 'skipped' };

const REASONS: Record<MoveCause, MoveReason> = { 'gpu-failure': 'GpuFailed', drain: 'HostDrained', 'host-lost': 'HostLost' };

/** a placement refused for want of capacity (the move waits), not for a fault */
const refused = (err: unknown) => isGpufleetError(err) && (err.code === 'CAPACITY_UNAVAILABLE' || err.code === 'PLACEMENT_IMPOSSIBLE');

/** Why this pod cannot leave its host now, or null when it can. */
export function moveBlocker(pod: PodRecord, order: Pick<MoveOrder, 'cause' | 'hostGone'>): 'persistent-volume' | 'network-volume' | null {
  if (pod.mounts.persistent) return 'persistent-volume';
  if ((pod.mounts.network?.length ?? 0) > 0 && order.cause === 'host-lost' && !order.hostGone) return 'network-volume';
  return null;
}

/** A pod the move applies to: on that host, wanting to run, and not terminated. */
export function onHostToMove(pod: PodRecord | undefined, fromHostId: string): pod is PodRecord {
  return pod !== undefined && pod.hostId === fromHostId && pod.desiredStatus === 'RUNNING' && pod.status !== 'TERMINATED';
}

export class PodMover {
  constructor(
    private readonly store: Store,
    private readonly placer: Placer,
  ) {}

  /** Moves one pod as `order` says, in one transaction; answers what became of it. */
  move(order: MoveOrder): Promise<MoveOutcome> {
    return this.store.transact(async (tx) => {
      const pod = await tx.get('pods', order.podId);
      if (!onHostToMove(pod, order.fromHostId)) return { kind: 'skipped' } as const;
      return this.moveIn(tx, pod, order);
    }, { actor: PROVISIONER_ACTOR });
  }

  /**
   * A drain's deadline passed with the pod still on the host: EXITED with the reason (its owner may
   * start it again elsewhere, or on this host once undrained when its volume is here).
   */
  stopAtDeadline(podId: string, fromHostId: string, deadline: string): Promise<boolean> {
    return this.store.transact(async (tx) => {
      const pod = await tx.get('pods', podId);
      if (!onHostToMove(pod, fromHostId)) return false;
      const now = new Date().toISOString();
      const next: PodRecord = settleMove({
        ...pod,
        status: 'EXITED',
        desiredStatus: 'EXITED',
        allocated: false,
        gpuUuids: [],
        statusReason: `stopped: the drain of host ${fromHostId} reached its deadline (${deadline}) before the pod could move`,
        conditions: setConditions(pod.conditions, [cond.released('stopped'), cond.stoppedByDrain()], now),
        updatedAt: now,
      });
      tx.put('pods', next);
      await accruePod(tx, pod, next, now);
      return true;
    }, { actor: PROVISIONER_ACTOR });
  }

  /** Pods waiting for a GPU after a move (hostId null): placed where one is free now. Answers how many were. */
  async placeWaiting(): Promise<number> {
    let placed = 0;
    for (const p of await this.store.list('pods', { status: 'PROVISIONING', hostId: null })) {
      if (!p.move || p.move.settled || p.desiredStatus !== 'RUNNING') continue;
      const outcome = await this.store.transact(async (tx) => {
        const pod = await tx.get('pods', p.id);
        if (!pod || pod.hostId !== null || !pod.move || pod.move.settled || pod.desiredStatus !== 'RUNNING') return null;
        return this.place(tx, pod, pod.move, pod.move.since);
      }, { actor: PROVISIONER_ACTOR });
      if (outcome?.kind === 'moved') placed++;
    }
    return placed;
  }

  private async moveIn(tx: StoreTx, pod: PodRecord, order: MoveOrder): Promise<MoveOutcome> {
    const now = new Date().toISOString();
    const reason = REASONS[order.cause];
    const move: PodMove = { cause: order.cause, detail: order.detail, fromHostId: order.fromHostId, toHostId: null, since: order.since, settled: false };
    const blocker = moveBlocker(pod, order);
    if (blocker === 'persistent-volume') {
      // EXITED on this host: its data is here; start places it here again (once the GPU is back)
      const next: PodRecord = {
        ...pod,
        status: 'EXITED',
        desiredStatus: 'EXITED',
        allocated: false,
        gpuUuids: [],
        observed: null,
        statusReason: `stopped: ${order.detail}; its persistent volume is on host ${order.fromHostId}, so it cannot move. Start it again once the host is back (it is placed there), or terminate it`,
        move: { ...move, settled: true },
        conditions: setConditions(pod.conditions, [cond.released('failed'), cond.moveRefused(reason, order.fromHostId, order.detail), cond.stoppedToMove()], now),
        updatedAt: now,
      };
      tx.put('pods', next);
      await accruePod(tx, pod, next, order.since);
      return { kind: 'exited' };
    }
    if (blocker === 'network-volume') {
      if (pod.move && !pod.move.settled && pod.move.cause === 'host-lost') return { kind: 'held' };
      // not billed while its host is lost; it stays there until an operator confirms the host is gone
      const next: PodRecord = {
        ...pod,
        statusReason: `host ${order.fromHostId} is lost; the pod has a network volume, so it moves only once an operator confirms the host is gone (POST /v2/hosts/${order.fromHostId}/lost)`,
        move,
        conditions: setConditions(pod.conditions, [cond.moveHeld(reason, order.fromHostId, order.detail)], now),
        updatedAt: now,
      };
      tx.put('pods', next);
      await accruePod(tx, pod, next, order.since);
      return { kind: 'held' };
    }
    return this.place(tx, pod, move, order.since);
  }

  /**
   * Same GPU type, same data center. Off a failed GPU, another host first (the host often needs a
   * reset or a reboot that would take the pod down again), then another healthy GPU of the same host.
   */
  private async placeElsewhere(tx: StoreTx, pod: PodRecord, move: PodMove) {
    const request = { pod, pinnedHostId: null, dataCenterIds: pod.dataCenterId ? [pod.dataCenterId] : pod.dataCenterIds };
    if (move.cause !== 'gpu-failure') return this.placer.place(tx, request);
    try {
      return await this.placer.place(tx, { ...request, avoidHostIds: [move.fromHostId] });
    } catch (err) {
      if (!refused(err)) throw err;
      return this.placer.place(tx, request);
    }
  }

  /**
   * Plans and applies the pod on another host; without a free GPU it waits (hostId null) with the
   * reason. `billedUntil`: where the open billing record ends (the failure).
   */
  private async place(tx: StoreTx, pod: PodRecord, move: PodMove, billedUntil: string): Promise<MoveOutcome> {
    const now = new Date().toISOString();
    const reason = REASONS[move.cause];
    try {
      const placement = await this.placeElsewhere(tx, pod, move);
      const next: PodRecord = {
        ...pod,
        ...placement,
        allocated: true,
        status: 'PROVISIONING',
        desiredStatus: 'RUNNING',
        observed: null,
        statusReason: `moved from host ${move.fromHostId} to host ${placement.hostId} (${move.detail}); waiting for the provisioner to start it`,
        move: { ...move, toHostId: placement.hostId },
        conditions: setConditions(pod.conditions, [cond.placed(placement.hostId), cond.pending(), cond.moved(reason, move.fromHostId, placement.hostId, move.detail)], now),
        updatedAt: now,
      };
      tx.put('pods', next);
      await accruePod(tx, pod, next, billedUntil);
      return { kind: 'moved', toHostId: placement.hostId };
    } catch (err) {
      if (!refused(err) || !isGpufleetError(err)) throw err;
      const what = pod.gpu ? `${pod.gpu.count} × ${pod.gpu.id}` : `a ${pod.cpu?.id ?? 'CPU'} flavor`;
      const waiting = `moving off host ${move.fromHostId} (${move.detail}): waiting for ${what} to be free in data center ${pod.dataCenterId ?? 'any'}; tried again at each reconcile pass`;
      const next: PodRecord = {
        ...pod,
        status: 'PROVISIONING',
        desiredStatus: 'RUNNING',
        hostId: null,
        allocated: false,
        gpuUuids: [],
        observed: null,
        statusReason: waiting,
        move,
        conditions: setConditions(pod.conditions, [cond.movedAway(), cond.pending(), cond.moveWaiting(reason, move.fromHostId, move.detail)], now),
        updatedAt: now,
      };
      // a retry that still finds nothing changes nothing
      if (pod.hostId !== null || pod.statusReason !== waiting) {
        tx.put('pods', next);
        await accruePod(tx, pod, next, billedUntil);
      }
      return { kind: 'waiting', reason: err.message };
    }
  }
}
