// Reads the environment the platform gives a worker container (runpod-compat.md 3.1) and applies the
// URL substitutions runpod-python applies, so both SDKs send byte-for-byte the same URLs.
import { randomUUID } from 'node:crypto';

export const SDK_VERSION = 'gpufleet-worker-ts/0.1.0';

/** The worker's environment is unusable (missing or malformed RUNPOD_* variable). */
export class WorkerConfigError extends Error {
  override readonly name = 'WorkerConfigError';
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
  }
}

export interface WorkerConfig {
  workerId: string;
  apiKey: string;
  /** GET_JOB with `$ID` replaced by the worker id; always holds a `?` */
  jobTakeUrl: string;
  /** derived from jobTakeUrl (`/job-take/` → `/job-stop/`); null when that segment is absent */
  jobStopUrl: string | null;
  /** POST_OUTPUT with `$RUNPOD_POD_ID` replaced; `$ID` is replaced per job */
  jobDoneTemplate: string;
  jobStreamTemplate: string;
  /** null when the worker should not ping (runpod-python: no API key or no RUNPOD_POD_ID) */
  pingUrl: string | null;
  pingIntervalMs: number;
  hostname: string;
  /** RUNPOD_POD_ID as given (the error payload reports "unknown" when unset, as runpod-python) */
  podIdForErrors: string;
}

type Env = Record<string, string | undefined>;

/** True when RUNPOD_WEBHOOK_GET_JOB is unset: runpod-python then runs in local test mode. */
export function isLocalMode(env: Env): boolean {
  return env.RUNPOD_WEBHOOK_GET_JOB === undefined;
}

export function readWorkerConfig(env: Env): WorkerConfig {
  const workerId = env.RUNPOD_POD_ID || randomUUID();
  const getJob = env.RUNPOD_WEBHOOK_GET_JOB;
  if (!getJob) {
    throw new WorkerConfigError('RUNPOD_WEBHOOK_GET_JOB is not set; the platform sets it in worker containers', 'RUNPOD_WEBHOOK_GET_JOB');
  }
  // the protocol appends its parameters with '&', so the template must already carry a query
  if (!getJob.includes('?')) {
    throw new WorkerConfigError(`RUNPOD_WEBHOOK_GET_JOB must contain '?' (got ${getJob})`, 'RUNPOD_WEBHOOK_GET_JOB');
  }
  const jobTakeUrl = getJob.replaceAll('$ID', workerId);
  const done = requireVar(env, 'RUNPOD_WEBHOOK_POST_OUTPUT');
  const stream = env.RUNPOD_WEBHOOK_POST_STREAM ?? 'JOB_STREAM_URL';
  const apiKey = env.RUNPOD_AI_API_KEY ?? '';
  const ping = env.RUNPOD_WEBHOOK_PING;
  const interval = Number(env.RUNPOD_PING_INTERVAL ?? '10000');
  return {
    workerId,
    apiKey,
    jobTakeUrl,
    jobStopUrl: jobTakeUrl.includes('/job-take/') ? jobTakeUrl.replace('/job-take/', '/job-stop/') : null,
    jobDoneTemplate: done.replaceAll('$RUNPOD_POD_ID', workerId),
    jobStreamTemplate: stream.replaceAll('$RUNPOD_POD_ID', workerId),
    pingUrl: ping && apiKey && env.RUNPOD_POD_ID ? ping.replaceAll('$RUNPOD_POD_ID', workerId) : null,
    pingIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 10_000,
    hostname: env.RUNPOD_POD_HOSTNAME ?? 'unknown',
    podIdForErrors: env.RUNPOD_POD_ID ?? 'unknown',
  };
}

function requireVar(env: Env, name: string): string {
  const v = env[name];
  if (!v) throw new WorkerConfigError(`${name} is not set; the platform sets it in worker containers`, name);
  return v;
}

/** `template` with `$ID` → the job id, then `&isStream=…`, as rp_http._handle_result builds it. */
export function jobUrl(template: string, jobId: string, isStream: boolean): string {
  return `${template.replaceAll('$ID', jobId)}&isStream=${isStream ? 'true' : 'false'}`;
}
