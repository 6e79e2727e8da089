// Whether a worker in service must be taken out, and why: checked on every autoscaler tick, from the
// worker's record (what the provisioner saw), its host and what the worker itself last said.
import type { EndpointRecord, HostRecord, WorkerPod } from '../../model/index.ts';
import type { Liveness } from './worker-liveness.ts';

export interface HealthOptions {
  /** a started container that has not called job-take or ping this long is taken out; default 10 min */
  initTimeoutMs: number;
  /** a worker that has called before and then stays silent this long is taken out; default 60 s */
  silentTimeoutMs: number;
  /** the origin the worker was told to call, for the reason shown when it never does */
  origin: string;
}

export interface Verdict {
  reason: string;
  /** a fault of the worker (counts toward the endpoint's backoff); a lost host or a deleted endpoint is not */
  fault: boolean;
}

export function assessWorker(
  pod: WorkerPod,
  endpoint: EndpointRecord | undefined,
  host: HostRecord | undefined,
  l: Liveness | undefined,
  now: number,
  o: HealthOptions,
): Verdict | null {
  if (!endpoint) return { reason: 'endpoint deleted', fault: false };
  // the provisioner saw the container exit, crash, or fail to start (it never restarts a worker)
  if (pod.status === 'ERROR' || pod.status === 'EXITED' || pod.desiredStatus !== 'RUNNING')
    return { reason: `worker container stopped: ${pod.statusReason ?? pod.status}`, fault: true };
  if (pod.hostId !== null && (!host || host.status === 'UNREACHABLE'))
    return { reason: `host ${pod.hostId} ${host ? `is unreachable (${host.statusReason ?? 'no heartbeat'})` : 'was removed'}`, fault: false };
  if (pod.status !== 'RUNNING') return null;
  if (pod.worker.readyAt === null) {
    const started = Date.parse(pod.startedAt ?? pod.updatedAt);
    if (now - started > o.initTimeoutMs && l?.check)
      return { reason: `the worker's health check did not answer 200 within ${Math.round((now - started) / 1000)} s of its container starting: ${l.check.detail}`, fault: true };
    if (now - started > o.initTimeoutMs)
      return {
        reason: `no job-take or ping from the worker ${Math.round((now - started) / 1000)} s after its container started; it may not reach the control plane at ${o.origin} (GPUFLEET_WORKER_URL), or its image runs no worker`,
        fault: true,
      };
    return null;
  }
  if (l?.check && now - l.lastSeenAt > o.silentTimeoutMs)
    return { reason: `out of rotation for ${Math.round((now - l.lastSeenAt) / 1000)} s: ${l.check.detail}`, fault: true };
  if (l && now - l.lastSeenAt > o.silentTimeoutMs)
    return { reason: `no ping or job-take from the worker for ${Math.round((now - l.lastSeenAt) / 1000)} s`, fault: true };
  return null;
}

/** The reason shown on a worker that is running but has not called yet (INITIALIZING). */
export function initializingReason(pod: WorkerPod, now: number, origin: string): string | null {
  if (pod.status !== 'RUNNING' || pod.worker.readyAt !== null) return null;
  const s = Math.round((now - Date.parse(pod.startedAt ?? pod.updatedAt)) / 1000);
  return `container running for ${s} s; waiting for the worker's first job-take or ping at ${origin}`;
}
