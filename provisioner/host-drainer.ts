// A drain with a deadline (docs/gpu-health.md, "Acting on it"), in the manner of Nomad's drainer: inside the host's
// reconcile pass (so one replica at a time, the one holding the host), its movable pods are moved off
// at most `parallel` at a time (a pod counts until it runs on its new host), pods that cannot move
// wait, and whatever is still on the host when the deadline passes is stopped. Progress is written
// to the host's `drain` record, which a restarted control plane reads back and goes on from.
import type { HostDrain, HostRecord, PodRecord } from '../model/index.ts';
import { moveBlocker, onHostToMove, type Services } from '../core/index.ts';
import { isWorker, PROVISIONER_ACTOR, withHostConditions } from '../model/index.ts';
import type { HostDocker } from './host-docker.ts';
import type { PodMoves } from './pod-moves.ts';

export class HostDrainer {
  constructor(
    private readonly s: Services,
    private readonly moves: PodMoves,
    /** GPUFLEET_DRAIN_PARALLEL */
    private readonly parallel: number,
  ) {}

  /** One step of the host's drain; answers whether it changed any pod. */
  async step(host: HostRecord, docker: HostDocker, pods: readonly PodRecord[]): Promise<boolean> {
    const d = host.drain;
    if (!host.drained || !d || d.finishedAt) return false;
    const order = { cause: 'drain' as const, detail: `host ${host.id} is drained with a deadline`, since: new Date().toISOString() };
    // in flight: moved off and not running yet on the new host (or waiting for a GPU)
    const moving: string[] = [];
    for (const id of d.moving) {
      const p = await this.s.store.get('pods', id);
      if (p?.move && !p.move.settled && p.move.fromHostId === host.id && p.desiredStatus === 'RUNNING') moving.push(id);
    }
    let here = pods.filter((p) => onHostToMove(p, host.id));
    let moved = 0;
    let stopped = 0;
    if (Date.now() >= Date.parse(d.deadline)) {
      for (const p of here) {
        if (isWorker(p)) await this.moves.moveOne(host, docker, p, order);
        else if (await this.s.podMover.stopAtDeadline(p.id, host.id, d.deadline)) stopped++;
      }
      here = [];
    } else {
      // workers first (they only need replacing), then pods that can leave; the others wait for the deadline
      const candidates = here.filter((p) => isWorker(p) || moveBlocker(p, order) === null).sort((a, b) => Number(isWorker(b)) - Number(isWorker(a)));
      const batch = candidates.slice(0, Math.max(0, this.parallel - moving.length));
      const results = await Promise.all(batch.map((p) => this.moves.moveOne(host, docker, p, order)));
      batch.forEach((p, i) => {
        const r = results[i]!;
        if (r.kind === 'moved' || r.kind === 'waiting') moving.push(p.id);
        if (r.kind === 'moved' || r.kind === 'waiting' || r.kind === 'retired') moved++;
        if (r.kind !== 'skipped') here = here.filter((x) => x.id !== p.id);
      });
    }
    const finished = here.length === 0 && moving.length === 0;
    const changed = moved > 0 || stopped > 0 || finished || moving.length !== d.moving.length;
    if (changed) await this.record(host.id, d, { moved, stopped, moving, finished });
    return moved > 0 || stopped > 0;
  }

  private async record(hostId: string, seen: HostDrain, step: { moved: number; stopped: number; moving: string[]; finished: boolean }): Promise<void> {
    await this.s.store.transact(async (tx) => {
      const h = await tx.get('hosts', hostId);
      // cancelled or started again meanwhile: that drain is not this one
      if (!h?.drain || h.drain.startedAt !== seen.startedAt || !h.drained) return;
      const drain: HostDrain = {
        ...h.drain,
        moved: h.drain.moved + step.moved,
        stopped: h.drain.stopped + step.stopped,
        moving: step.moving,
        finishedAt: step.finished ? new Date().toISOString() : null,
      };
      tx.put('hosts', withHostConditions({ ...h, drain }));
    }, { actor: PROVISIONER_ACTOR });
  }
}
