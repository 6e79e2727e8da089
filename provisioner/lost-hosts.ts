// Lost hosts (docs/gpu-health.md, "Acting on it"): a host unreachable for longer than GPUFLEET_HOST_LOST_AFTER is
// lost, and its movable pods are placed elsewhere, keeping their ids. Nothing can be stopped on a host
// that does not answer: during a partition the old copy may still run. Pods with a network volume
// stay until an operator confirms the host is gone (POST /v2/hosts/{id}/lost): two writers would
// corrupt the volume. The old containers are removed at the host's first contact after it returns,
// before anything else runs there (the reconcile pass removes containers of pods it no longer holds
// first). Runs in the host's reconcile pass, so one replica at a time acts.
import type { HostRecord } from '../model/index.ts';
import { PROVISIONER_ACTOR, withHostConditions } from '../model/index.ts';
import { onHostToMove, type Services } from '../core/index.ts';
import type { PodMoves } from './pod-moves.ts';

/** GPUFLEET_HOST_LOST_AFTER's default */
export const DEFAULT_HOST_LOST_AFTER_MS = 5 * 60_000;

export class LostHosts {
  constructor(
    private readonly s: Services,
    private readonly moves: PodMoves,
    private readonly lostAfterMs: number,
  ) {}

  /** After a missed heartbeat: declares the host lost once it has been away long enough, and moves its pods. */
  async check(hostId: string): Promise<void> {
    let host = await this.s.store.get('hosts', hostId);
    if (!host || host.status !== 'UNREACHABLE') return;
    if (!host.lost) {
      // away since its first missed heartbeat (lastSeenAt is written at most every 30 s)
      const since = host.unansweredSince ?? host.lastSeenAt ?? host.createdAt;
      if (Date.now() - Date.parse(since) < this.lostAfterMs) return;
      host = (await this.declare(hostId, since)) ?? undefined;
      if (!host?.lost) return;
    }
    const lost = host.lost!;
    const order = {
      cause: 'host-lost' as const,
      detail: lost.confirmed ? `host ${host.id} is gone (confirmed by an operator)` : `host ${host.id} has not answered since ${lost.since}`,
      since: lost.since,
      hostGone: lost.confirmed,
    };
    for (const p of await this.s.store.list('pods', { hostId })) {
      if (!onHostToMove(p, hostId)) continue;
      // held already (a network volume, not confirmed gone): nothing new to do until an operator says so
      if (p.move && !p.move.settled && p.move.cause === 'host-lost' && p.move.fromHostId === hostId && !lost.confirmed) continue;
      await this.moves.moveOne(host, null, p, order);
    }
  }

  private declare(hostId: string, since: string): Promise<HostRecord | null> {
    return this.s.store.transact(async (tx) => {
      const h = await tx.get('hosts', hostId);
      if (!h || h.status !== 'UNREACHABLE') return null;
      if (h.lost) return h;
      const next = withHostConditions({ ...h, lost: { since, at: new Date().toISOString(), confirmed: false } });
      tx.put('hosts', next);
      return next;
    }, { actor: PROVISIONER_ACTOR });
  }
}
