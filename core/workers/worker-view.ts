// How a worker is shown: the public v2 `Worker` (GET /v2/serverless/{id}/workers), and the v1 pod
// shape `GET /v1/endpoints/{id}?includeWorkers=true` lists. Neither carries env: the container's
// env holds the worker's token, and the record's env is the endpoint's and template's, shown there.
import type { WorkerPod, WorkerState } from '../../model/index.ts';
import { holdsCompute } from '../../model/index.ts';

export interface WorkerView {
  id: string;
  status: WorkerState;
  /** made for an older endpoint version: it is being replaced */
  isStale: boolean;
  version: number;
  gpuCount: number;
  gpuTypeId: string | null;
  image: string;
  uptimeSeconds: number;
  dataCenterId: string | null;
  startedAt: string | null;
  createdAt: string;
  /** gpufleet: the host it runs on */
  machineId: string | null;
  /** gpufleet: USD per hour, billed to the endpoint */
  costPerHr: number;
  /** gpufleet: why it is in its state (starting, waiting for its first call, taken out and why) */
  statusReason: string | null;
}

export function toWorkerView(pod: WorkerPod, status: WorkerState, endpointVersion: number, reason: string | null, now: number): WorkerView {
  const started = pod.status === 'RUNNING' && pod.startedAt ? Date.parse(pod.startedAt) : null;
  return {
    id: pod.id,
    status,
    isStale: pod.worker.version !== endpointVersion,
    version: pod.worker.version,
    gpuCount: pod.gpu?.count ?? 0,
    gpuTypeId: pod.gpu?.id ?? null,
    image: pod.image,
    uptimeSeconds: started === null ? 0 : Math.max(0, Math.floor((now - started) / 1000)),
    dataCenterId: pod.dataCenterId,
    startedAt: pod.startedAt,
    createdAt: pod.createdAt,
    machineId: pod.hostId,
    costPerHr: holdsCompute(pod.status) && pod.allocated ? pod.costPerHr : 0,
    statusReason: reason,
  };
}

/** The v1 `Pod` fields a worker has (public v1 lists an endpoint's workers as pods). */
export function toWorkerPodView(pod: WorkerPod, w: WorkerView) {
  return {
    id: pod.id,
    name: pod.name,
    desiredStatus: pod.desiredStatus,
    status: w.status,
    statusReason: w.statusReason,
    image: pod.image,
    endpointId: pod.endpointId,
    slsVersion: pod.worker.version,
    isStale: w.isStale,
    machineId: pod.hostId,
    dataCenterId: pod.dataCenterId,
    gpu: pod.gpu ? { id: pod.gpu.id, count: pod.gpu.count } : null,
    costPerHr: w.costPerHr,
    containerDiskInGb: pod.disk,
    lastStartedAt: pod.startedAt,
    createdAt: pod.createdAt,
  };
}
