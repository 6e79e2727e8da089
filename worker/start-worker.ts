// startWorker(): the SDK's entry point, runpod.serverless.start() for TypeScript.
import { isLocalMode, readWorkerConfig, WorkerConfigError } from './config.ts';
import { localTestJob, runLocalTest } from './local-mode.ts';
import { defaultLogger } from './logger.ts';
import type { WorkerHandle, WorkerOptions } from './types.ts';
import { WorkerLoop } from './worker-loop.ts';

/**
 * Starts polling the platform for jobs with the RUNPOD_* environment of a worker container and runs
 * `handler` for each. Throws WorkerConfigError at once when that environment is unusable. Unless
 * `handleSignals: false`, SIGTERM/SIGINT stop taking jobs, drain the in-flight ones and exit with 0
 * (a second signal exits at once with 1).
 */
export function startWorker<I = unknown>(options: WorkerOptions<I>): WorkerHandle {
  const env = options.env ?? process.env;
  const log = options.logger ?? defaultLogger(env);
  // runpod-python: a --test_input argument, or no job-take URL, means a local test run
  if (isLocalMode(env) || process.argv.includes('--test_input')) return startLocal(options);
  const config = readWorkerConfig(env);
  // the loop only passes each job's own input back to the handler, so widening I is sound here
  const loop = new WorkerLoop(config, options as WorkerOptions<unknown>, log);
  if (options.handleSignals !== false) installSignalHandlers(loop, log);
  return {
    workerId: config.workerId,
    done: loop.done,
    stop: () => loop.stop(),
    inProgress: () => loop.inProgress(),
  };
}

/** No RUNPOD_WEBHOOK_GET_JOB: run the local test job once (runpod-python's local mode). */
function startLocal<I>(options: WorkerOptions<I>): WorkerHandle {
  const job = localTestJob();
  if (!job) {
    throw new WorkerConfigError(
      'RUNPOD_WEBHOOK_GET_JOB is not set (the platform sets it in worker containers); for a local run pass --test_input \'{"input": ...}\' or write test_input.json',
      'RUNPOD_WEBHOOK_GET_JOB',
    );
  }
  const done = runLocalTest(options, job as Parameters<typeof runLocalTest<I>>[1]).then(() => undefined);
  return { workerId: 'local', done, stop: () => done, inProgress: () => [] };
}

function installSignalHandlers(loop: WorkerLoop, log: { info(m: string): void }): void {
  let received = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received) {
      log.info(`${signal} again; exiting without waiting for in-flight jobs`);
      process.exit(1);
    }
    received = true;
    void loop.stop(signal).then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  void loop.done.finally(() => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
}
