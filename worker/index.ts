// gpufleet worker SDK: write a serverless worker in TypeScript that speaks the public platform's
// worker protocol (the one runpod-python's worker speaks), so it runs on gpufleet and on the public
// platform alike. See docs/worker-sdk.md.
export { startWorker } from './start-worker.ts';
export { progressUpdate } from './progress.ts';
export { runLocalTest } from './local-mode.ts';
export { WorkerConfigError, SDK_VERSION } from './config.ts';
export { JobStoppedError } from './run-job.ts';
export type { Handler, Job, JobContext, WorkerHandle, WorkerLogger, WorkerOptions } from './types.ts';
export type { JobDoneBody } from './protocol-client.ts';
