// A start that comes while the pod's previous container is still in its stop grace period
// (docs/pods.md#stopping): the grace is never shortened (the container's SIGTERM handler may be saving
// work). The host's reconcile pass finishes the stop first, then starts the new container at once;
// meanwhile the pod's reason and condition say what it waits for.
import { podConditions, setConditions, type PodRecord } from '../../model/index.ts';

/** The reconciler's `Stopping` condition is on the pod and the start keeps it on the same host. */
export function stillStopping(before: PodRecord, hostId: string | null): boolean {
  const c = before.conditions?.find((x) => x.type === 'ContainerRunning');
  return c?.reason === 'Stopping' && before.hostId !== null && before.hostId === hostId;
}

export function waitForStop(before: PodRecord, next: PodRecord, now: string): PodRecord {
  // the condition's time is when the container began running or stopping; the event of the stop is when SIGTERM went out
  const since = before.conditions?.find((x) => x.type === 'ContainerRunning' && x.reason === 'Stopping') ? before.updatedAt : null;
  return {
    ...next,
    statusReason: `placed on host ${next.hostId}; waiting for its previous container to finish its stop grace period${since ? ` (stopping since ${since})` : ''}, then starting at once`,
    conditions: setConditions(next.conditions, [podConditions.waitingForStop()], now),
  };
}
