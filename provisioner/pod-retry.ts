// What a pod's reason says while a step that failed on its host waits out its backoff
// (retry-backoff.ts), in our words: which step, how many times in a row, and when it is tried again.
// The command's own output (docker's, the shell's) goes to the operator's log only.
import { isGpufleetError } from '../model/index.ts';
import type { PodStep } from './host-docker.ts';

const STEP_WORDS: Record<PodStep, string> = {
  network: "the pod's network could not be set up on the host",
  stop: 'the host did not stop the container',
  restart: 'the host did not restart the container',
};

/** The failure a pass retries later: a command that failed on a host that still answers. */
export function retriedLater(err: unknown): boolean {
  return isGpufleetError(err) && err.code === 'SSH_COMMAND_FAILED';
}

function stepWords(err: unknown): string {
  if (!isGpufleetError(err)) return 'a command on the host failed';
  const step = err.fields.step;
  if (typeof step === 'string' && step in STEP_WORDS) return STEP_WORDS[step as PodStep];
  // no exit status: cut off, refused or out of time (fleet/ssh-pool.ts)
  return err.fields.code === null ? 'a command on the host did not finish' : 'a command on the host failed';
}

/** e.g. "the host did not stop the container (3 times in a row); trying again in 4 s" */
export function retryReason(err: unknown, failures: number, delayMs: number): string {
  const times = failures > 1 ? ` (${failures} times in a row)` : '';
  return `${stepWords(err)}${times}; trying again in ${Math.max(1, Math.round(delayMs / 1000))} s`;
}
