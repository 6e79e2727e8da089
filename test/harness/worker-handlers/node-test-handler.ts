// The entry point of the Node test worker image (and of the SDK's SIGTERM test): the shared test
// handler (test-job-handler.ts) under the worker SDK. Worker options come from
// GPUFLEET_TEST_CONCURRENCY, GPUFLEET_TEST_REFRESH_WORKER=true and GPUFLEET_TEST_AGGREGATE_STREAM=true.
import { startWorker } from '../../../worker/index.ts';
import { testJobHandler, type TestInput } from './test-job-handler.ts';

startWorker<TestInput>({
  handler: testJobHandler,
  concurrency: Number(process.env.GPUFLEET_TEST_CONCURRENCY ?? '1'),
  refreshWorker: process.env.GPUFLEET_TEST_REFRESH_WORKER === 'true',
  returnAggregateStream: process.env.GPUFLEET_TEST_AGGREGATE_STREAM === 'true',
});
