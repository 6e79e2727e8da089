// Pods on a failed GPU move (docs/gpu-health.md "Acting on it"): inside the host's reconcile
// pass, every pod that holds a GPU in FAILURE through an incident seen live (never one read from the
// kernel log as it was before the watcher first read the host) is moved off it, as a drain's are
// (pod-moves.ts), all of them at once. The GPU watcher's signal (core/hosts' GpuHealthSignal) kicks
// the host's pass as soon as a FAILURE is committed; the store is the truth, so a pass after a
// restart finds the same pods and moves them.
import type { GpuIncident, HostGpu, HostRecord, PodRecord } from '../model/index.ts';
import { incidentLiveSince } from '../model/index.ts';
import { onHostToMove } from '../core/index.ts';
import type { HostDocker } from './host-docker.ts';
import type { PodMoves } from './pod-moves.ts';

/** The open incident that makes this GPU fail, when it was seen live; null otherwise. */
export function liveFailure(g: HostGpu): GpuIncident | null {
  if (g.health !== 'FAILURE') return null;
  const open = (g.incidents ?? []).filter((i) => i.resolvedAt === null && i.health === 'FAILURE' && i.live);
  return open[0] ?? null;
}

/** The incident in our words, for the pod's reason, its Moved condition and its pod.moved event. */
/**
 * Where the moved pod's billing stops: when the incident became live, never its firstSeen (a pre-watch
 * line the watcher read days before a live repeat would leave that time unbilled).
 */
export const moveSince = (i: GpuIncident): string => incidentLiveSince(i) ?? i.lastSeen;

export function failureWords(g: HostGpu, i: GpuIncident): string {
  const what = i.kind === 'xid' ? `Xid ${i.xid} (${i.mnemonic})` : `${i.counter} (${i.mnemonic})`;
  return `${what} on GPU ${g.index} (${g.uuid})`;
}

export class GpuFailureMoves {
  constructor(private readonly moves: PodMoves) {}

  /** Moves the pods on the host's failed GPUs; answers whether it moved any. */
  async step(host: HostRecord, docker: HostDocker, pods: readonly PodRecord[]): Promise<boolean> {
    const failed = new Map<string, { g: HostGpu; i: GpuIncident }>();
    for (const g of host.facts.gpus) {
      const i = liveFailure(g);
      if (i) failed.set(g.uuid, { g, i });
    }
    if (failed.size === 0) return false;
    const leaving = pods.filter((p) => onHostToMove(p, host.id) && p.allocated && p.gpuUuids.some((u) => failed.has(u)));
    await Promise.all(
      leaving.map((p) => {
        const { g, i } = failed.get(p.gpuUuids.find((u) => failed.has(u))!)!;
        return this.moves.moveOne(host, docker, p, { cause: 'gpu-failure', detail: failureWords(g, i), since: moveSince(i) });
      }),
    );
    return leaving.length > 0;
  }
}
