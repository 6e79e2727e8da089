// The image fixture's worker (TEST FIXTURE, handler.ts): gpufleet's worker SDK running the handler.
// The image's entry point: esbuild bundles this file with the SDK as /app/worker.mjs.
import { startWorker } from '../../worker/index.ts';
import { generate } from './handler.ts';

startWorker({ handler: (job) => generate(job.input) });
