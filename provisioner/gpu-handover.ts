// Never one GPU in two containers (docs/teams.md "Interruptible pods"): a pod whose GPUs came from a
// preempted pod (or any pod that released them while its container still runs) starts only once the
// host shows no running container of another pod holding one of them. The pass stops containers
// before it starts any (reconciler.ts); this is what holds when a stop has not gone through yet (a
// grace period under way on another replica's pass, a `docker stop` that failed and waits out its
// backoff, a container the host shows running although its pod moved on).
import type { PodRecord } from '../model/index.ts';
import type { ObservedContainer } from './host-docker.ts';

export class GpuHandover {
  /** GPU UUID → the pod whose running container holds it, as the host showed at the pass's start */
  private readonly holder = new Map<string, string>();

  constructor(containers: readonly ObservedContainer[]) {
    for (const c of containers) {
      if (!c.running || !c.gpus) continue;
      for (const uuid of c.gpus.split(',')) this.holder.set(uuid, c.podId);
    }
  }

  /** The pod's container was stopped or removed in this pass: its GPUs are free. */
  released(podId: string): void {
    for (const [uuid, holder] of this.holder) if (holder === podId) this.holder.delete(uuid);
  }

  /** The other pod whose running container holds one of `pod`'s GPUs, or null. */
  blocker(pod: Pick<PodRecord, 'id' | 'gpuUuids'>): string | null {
    for (const uuid of pod.gpuUuids) {
      const holder = this.holder.get(uuid);
      if (holder !== undefined && holder !== pod.id) return holder;
    }
    return null;
  }
}
