// Spec 3.1 and 3.2: which actions each status publishes, and what each action does to a pod.
import type { DesiredStatus, PodAction, PodStatus } from './pod-status.ts';

const ACTIONS: Record<PodStatus, readonly PodAction[]> = {
  PROVISIONING: ['stop', 'terminate'],
  STARTING: ['stop', 'terminate'],
  RUNNING: ['stop', 'restart', 'terminate'],
  EXITED: ['start', 'terminate'],
  ERROR: ['start', 'terminate'],
  TERMINATED: [],
};

/** A locked pod cannot be stopped: `stop` leaves its actions, so asking for it is a 409 like any other. */
export function actionsFor(status: PodStatus, locked = false): PodAction[] {
  const actions = ACTIONS[status];
  return locked ? actions.filter((a) => a !== 'stop') : [...actions];
}

/** Statuses in which a pod holds compute (GPUs, CPU) and so costs money. */
export function holdsCompute(status: PodStatus): boolean {
  return status === 'PROVISIONING' || status === 'STARTING' || status === 'RUNNING';
}

export interface Transition {
  status: PodStatus;
  desiredStatus: DesiredStatus;
  statusReason: string | null;
  /** the pod must be placed again (start) */
  place: boolean;
  /** the container restarts in place */
  restart: boolean;
}

/** The transition `action` causes from `status`, or null when the action is not in the pod's actions. */
export function transition(status: PodStatus, action: PodAction, locked = false): Transition | null {
  if (!actionsFor(status, locked).includes(action)) return null;
  switch (action) {
    case 'start':
      return { status: 'PROVISIONING', desiredStatus: 'RUNNING', statusReason: 'placing pod', place: true, restart: false };
    case 'stop':
      return { status: 'EXITED', desiredStatus: 'EXITED', statusReason: 'stopped by user', place: false, restart: false };
    case 'restart':
      return { status: 'RUNNING', desiredStatus: 'RUNNING', statusReason: 'restart requested', place: false, restart: true };
    case 'terminate':
      return { status: 'TERMINATED', desiredStatus: 'TERMINATED', statusReason: 'terminated by user', place: false, restart: false };
  }
}
