// The environment a worker container gets beside its template's and endpoint's env: what the worker
// SDKs read to find their jobs (runpod-compat.md 3.1). The SDKs append their own query parameters
// with `&`, so every URL already holds a `?`. `$RUNPOD_POD_ID` and `$ID` are written literally: the
// SDK substitutes them (the worker id once, the job id per request); in GET_JOB the SDK substitutes
// only `$ID`, so the worker id is written there as it is.
import type { WorkerPod } from '../../model/index.ts';

export const DEFAULT_PING_INTERVAL_MS = 10_000;

export interface WorkerEnvInput {
  /** the control plane as workers reach it (GPUFLEET_WORKER_URL or the default), no trailing slash */
  origin: string;
  /** the worker's token, in clear: only ever placed in the container's env */
  token: string;
  pingIntervalMs: number;
}

export function workerContainerEnv(pod: WorkerPod, input: WorkerEnvInput): Record<string, string> {
  const base = `${input.origin}/v2/${encodeURIComponent(pod.endpointId)}`;
  const query = `?${new URLSearchParams(pod.gpu ? { gpu: pod.gpu.id } : { cpu: pod.cpu?.id ?? 'cpu' }).toString()}`;
  return {
    RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/${encodeURIComponent(pod.id)}${query}`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID${query}`,
    RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID${query}`,
    RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID${query}`,
    RUNPOD_POD_ID: pod.id,
    RUNPOD_POD_HOSTNAME: pod.id,
    RUNPOD_ENDPOINT_ID: pod.endpointId,
    RUNPOD_AI_API_KEY: input.token,
    RUNPOD_PING_INTERVAL: String(input.pingIntervalMs),
  };
}

/** Names of the variables above: a template or endpoint env cannot set them (ours win). */
export const WORKER_ENV_NAMES = [
  'RUNPOD_WEBHOOK_GET_JOB',
  'RUNPOD_WEBHOOK_POST_OUTPUT',
  'RUNPOD_WEBHOOK_POST_STREAM',
  'RUNPOD_WEBHOOK_PING',
  'RUNPOD_POD_ID',
  'RUNPOD_POD_HOSTNAME',
  'RUNPOD_ENDPOINT_ID',
  'RUNPOD_AI_API_KEY',
  'RUNPOD_PING_INTERVAL',
] as const;
