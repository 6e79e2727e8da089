// The provisioner's half of moving a pod off its host (docs/gpu-health.md, "Acting on it"): where the host answers,
// the old container is stopped first (SIGTERM, SIGKILL after the grace period, at most 30 s more),
// then core moves the pod (PodMover: plan and apply on another host, keeping its id), then the old
// container is removed. A container that does not exit in time does not hold the move: the pod moves
// and the host gets a ContainersStuck condition. Serverless workers are not moved: they are retired
// as a killed worker is (their jobs go back to the queue) and the autoscaler starts another.
import type { Logger } from 'pino';
import type { HostRecord, PodRecord } from '../model/index.ts';
import { isWorker, PROVISIONER_ACTOR, withHostConditions } from '../model/index.ts';
import { moveBlocker, type MoveOrder, type MoveOutcome, type Services } from '../core/index.ts';
import { containerName } from './container-spec.ts';
import type { HostDocker } from './host-docker.ts';

/** seconds between SIGTERM and SIGKILL (docker stop -t), as for a user's stop */
export const STOP_GRACE_S = 10;
/** seconds a container may take to exit after SIGKILL before it is left behind as stuck */
export const KILL_WAIT_S = 30;

export type MoveCauseOrder = Omit<MoveOrder, 'podId' | 'fromHostId'>;

export type PodMoveResult = MoveOutcome | { kind: 'retired' };

export class PodMoves {
  constructor(
    private readonly s: Services,
    private readonly log?: Pick<Logger, 'info' | 'warn'>,
    private readonly timing: { graceS: number; killWaitS: number } = { graceS: STOP_GRACE_S, killWaitS: KILL_WAIT_S },
  ) {}

  /** Moves one pod off `host`; `docker` null: the host does not answer (nothing can be stopped there). */
  async moveOne(host: HostRecord, docker: HostDocker | null, pod: PodRecord, order: MoveCauseOrder): Promise<PodMoveResult> {
    if (isWorker(pod)) {
      await this.s.workers.retire(pod.id, `its host ${host.id} is being left: ${order.detail}`, { fault: false });
      if (docker) await docker.remove(containerName(pod.id));
      return { kind: 'retired' };
    }
    const leaves = moveBlocker(pod, order) === null;
    if (docker && leaves && (await docker.stopForMove(pod.id, this.timing.graceS, this.timing.killWaitS)) === 'stuck') {
      this.log?.warn({ hostId: host.id, podId: pod.id }, 'container did not exit within 30 s of SIGKILL; the pod moves anyway');
      await this.stuck(host.id, pod.id);
    }
    const outcome = await this.s.podMover.move({ ...order, podId: pod.id, fromHostId: host.id });
    this.log?.info({ hostId: host.id, podId: pod.id, cause: order.cause, outcome }, 'pod moved off its host');
    // the old copy goes (not only stopped) once the pod is placed elsewhere or waits for a GPU
    if (docker && (outcome.kind === 'moved' || outcome.kind === 'waiting')) await docker.remove(containerName(pod.id));
    return outcome;
  }

  /** The host's record names the container left behind (ContainersStuck); cleared when it is gone. */
  private async stuck(hostId: string, podId: string): Promise<void> {
    await this.s.store.transact(async (tx) => {
      const h = await tx.get('hosts', hostId);
      if (!h || h.stuckContainers?.some((c) => c.podId === podId)) return;
      tx.put('hosts', withHostConditions({ ...h, stuckContainers: [...(h.stuckContainers ?? []), { podId, since: new Date().toISOString() }] }));
    }, { actor: PROVISIONER_ACTOR });
  }

  /** Forgets stuck containers the host no longer shows (removed since, or exited at last). */
  async clearStuck(host: HostRecord, shown: ReadonlySet<string>): Promise<void> {
    if (!host.stuckContainers?.some((c) => !shown.has(c.podId))) return;
    await this.s.store.transact(async (tx) => {
      const h = await tx.get('hosts', host.id);
      if (!h?.stuckContainers) return;
      tx.put('hosts', withHostConditions({ ...h, stuckContainers: h.stuckContainers.filter((c) => shown.has(c.podId)) }));
    }, { actor: PROVISIONER_ACTOR });
  }
}
