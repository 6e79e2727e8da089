// Serverless workers (docs/serverless.md). A worker is a pod record with `endpointId` and `worker`
// set: it reuses placement, the provisioner and per-second accrual, but users see it only under its
// endpoint, never as a pod (`WorkerPod` and `isWorker` are in pod.ts).
/** The public v2 `Worker.status` values. */
export const WORKER_STATES = ['INITIALIZING', 'IDLE', 'RUNNING', 'THROTTLED', 'UNHEALTHY'] as const;
export type WorkerState = (typeof WORKER_STATES)[number];

/** What a pod record carries when it is a worker. */
export interface WorkerFields {
  /** the endpoint's `version` the worker was made for; an older one is stale and is replaced */
  version: number;
  /** sha256 (hex) of the worker's token (RUNPOD_AI_API_KEY in its container) */
  tokenHash: string;
  /** the token itself, sealed with the control plane's secret box (context `pods/<id>/workerToken`) */
  tokenSealed: string;
  /** the first job-take or ping: the worker finished initializing */
  readyAt: string | null;
  /** why the worker was taken out of service; null while it serves */
  retiredReason: string | null;
  /** it was taken out for a fault (crash, unhealthy, silent, host lost), not by scaling or a recycle */
  failed: boolean;
}
