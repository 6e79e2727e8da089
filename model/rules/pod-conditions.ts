// The pod's conditions (docs/pods.md "Conditions"): Scheduled, ImageReady, ContainerRunning. Every
// message is a fixed sentence of ours, with at most a host id, an exit code or a count in it: what
// docker, a registry or the tenant's container printed stays in the operator's log or in the
// statusReason, never here.
import type { ConditionUpdate, PodCondition, PodConditionType } from '../records/condition.ts';
import type { PodAction } from '../records/pod-status.ts';
import { setConditions } from './conditions.ts';

type Update = ConditionUpdate<PodConditionType>;

const scheduled = (status: 'True' | 'False', reason: string, message: string): Update => ({ type: 'Scheduled', status, reason, message });
const image = (status: 'True' | 'False', reason: string, message: string): Update => ({ type: 'ImageReady', status, reason, message });
const moved = (status: 'True' | 'False', reason: string, message: string): Update => ({ type: 'Moved', status, reason, message });
const running = (status: 'True' | 'False' | 'Unknown', reason: string, message: string): Update => ({ type: 'ContainerRunning', status, reason, message });

/** Why a pod no longer holds its host's compute. */
const RELEASED = {
  stopped: 'stopped by user; its compute is released',
  exited: 'the container exited; its compute is released',
  failed: 'the pod failed; its compute is released',
  terminated: 'terminated; its compute is released',
  preempted: 'preempted; its GPUs went to another pod',
} as const;

export const podConditions = {
  placed: (hostId: string) => scheduled('True', 'Placed', `placed on host ${hostId}; its compute is held for the pod`),
  released: (why: keyof typeof RELEASED) => scheduled('False', 'Released', RELEASED[why]),
  hostRemoved: () => scheduled('False', 'HostRemoved', 'its host was removed from the fleet'),

  pullQueued: () => image('False', 'Pulling', 'waiting for a free pull slot on the host'),
  pulling: () => image('False', 'Pulling', 'pulling the image onto the host'),
  pullStalled: (stallS: number, retryS: number) => image('False', 'PullStalled', `the pull made no progress for ${stallS} s; trying again in ${retryS} s`),
  pullStalledOut: (stalls: number) => image('False', 'PullStalled', `the pull stalled ${stalls} times; the pod is stopped`),
  /** `why` is one of pull-errors.ts's fixed sentences, never docker's output */
  pullFailed: (why: string) => image('False', 'PullFailed', `image pull failed: ${why}`),
  refusedByPolicy: () => image('False', 'RefusedByPolicy', "the image's registry is not one this fleet pulls from"),
  present: () => image('True', 'Present', 'the image is on the host'),

  pending: () => running('False', 'Pending', 'waiting for the provisioner to start the container'),
  starting: () => running('False', 'Starting', 'starting the container'),
  running: () => running('True', 'Running', 'the container is running'),
  restartRequested: () => running('True', 'RestartRequested', 'restart requested'),
  /** a change that recreates the container was accepted; the old container runs until the new one starts */
  updating: () => running('True', 'Updating', 'the container runs the previous spec; it is being recreated with the change'),
  resizing: (count: number, hostId: string) => running('True', 'Updating', `the container is being recreated with ${count} GPU(s) on host ${hostId}`),
  stopped: () => running('False', 'Stopped', 'stopped by user'),
  preempted: (graceS: number) => running('False', 'Preempted', `preempted: the container is sent SIGTERM, then SIGKILL after ${graceS} s; volume and disk are kept`),
  stoppedByDrain: () => running('False', 'DrainDeadline', "stopped: its host's drain reached its deadline before the pod could move"),
  stoppedToMove: () => running('False', 'HostLeft', 'stopped: its host is being left and the pod cannot move (the Moved condition says why)'),
  /** a stop accepted; the container is still in its grace period (SIGTERM sent, not yet exited) */
  stopping: (graceS: number) => running('True', 'Stopping', `the container was sent SIGTERM and has up to ${graceS} s to exit`),
  /** a start accepted while the previous container of the pod is still in its stop grace period */
  waitingForStop: () => running('False', 'WaitingForStop', 'the previous container is finishing its stop grace period; the new one starts when it has exited'),
  exited: (code: number) => running('False', 'Exited', `the container exited on its own with code ${code}`),
  /** ended by a signal from outside gpufleet (docker kill on the host, the OOM killer) */
  killed: (code: number) => running('False', 'Killed', `the container was killed by a signal gpufleet did not send (exit code ${code})`),
  crashed: (code: number) => running('False', 'Crashed', `the container crashed on start with exit code ${code}`),
  startFailed: () => running('False', 'StartFailed', 'the container could not be started; the status reason says why'),
  imageUnavailable: () => running('False', 'ImageUnavailable', 'the image could not be pulled'),
  failed: () => running('False', 'Failed', 'the pod could not be run; the status reason says why'),
  /** `reason` is retryReason's (provisioner/pod-retry.ts): our words for the step and the wait */
  retrying: (isRunning: boolean, reason: string) => running(isRunning ? 'True' : 'False', 'RetryBackoff', reason),
  hostUnreachable: () => running('Unknown', 'HostUnreachable', 'its host does not answer; the container state is not known'),
  containerHostRemoved: () => running('False', 'HostRemoved', 'its host was removed from the fleet'),
  terminated: () => running('False', 'Terminated', 'terminated'),

  /** `why` is moveWords (below): the cause in our words, with host ids, a GPU uuid and an Xid number at most */
  moved: (reason: MoveReason, from: string, to: string, why: string) => moved('True', reason, `moved from host ${from} to host ${to}: ${why}`),
  moveWaiting: (reason: MoveReason, from: string, why: string) => moved('False', reason, `moving off host ${from} (${why}): waiting for a free GPU of its type in its data center`),
  moveRefused: (reason: MoveReason, from: string, why: string) => moved('False', reason, `cannot move off host ${from} (${why}): its persistent volume is on that host`),
  moveHeld: (reason: MoveReason, from: string, why: string) => moved('False', reason, `not moved off host ${from} (${why}) until the host is confirmed gone: a network volume must never have two writers`),
  movedAway: () => scheduled('False', 'Moving', 'its compute on the old host is released; it is being placed again'),
} as const;

/** the Moved condition's reason for each cause (model/records/pod-move.ts) */
export type MoveReason = 'GpuFailed' | 'HostDrained' | 'HostLost';

/** The conditions a user's action leaves (create is a start on the host it was placed on). */
export function actionConditions(pod: { conditions?: PodCondition[] | undefined; hostId: string | null }, action: PodAction | 'create', now: string): PodCondition[] {
  const c = podConditions;
  const updates: Update[] =
    action === 'create' || action === 'start'
      ? [c.placed(pod.hostId ?? 'none'), c.pending()]
      : action === 'stop'
        ? [c.released('stopped'), c.stopped()]
        : action === 'terminate'
          ? [c.released('terminated'), c.terminated()]
          : [c.restartRequested()];
  return setConditions(pod.conditions, updates, now);
}
