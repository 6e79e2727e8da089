// Local test mode, as runpod-python's: without RUNPOD_WEBHOOK_GET_JOB the worker runs one job from
// `--test_input '<json>'` (or ./test_input.json), prints the job-done body as one JSON line on
// stdout and stops; the exit code is 1 when the job failed.
import { existsSync, readFileSync } from 'node:fs';
import { WorkerConfigError } from './config.ts';
import { runJob } from './run-job.ts';
import type { Job, WorkerOptions } from './types.ts';

/** The test job from argv / ./test_input.json, or null when there is none. */
export function localTestJob(argv: readonly string[] = process.argv): Job<unknown> | null {
  const i = argv.indexOf('--test_input');
  let text: string | undefined;
  if (i >= 0) text = argv[i + 1];
  else if (existsSync('test_input.json')) text = readFileSync('test_input.json', 'utf8');
  if (text === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new WorkerConfigError(`--test_input is not JSON: ${(err as Error).message}`, '--test_input');
  }
  const input = typeof parsed === 'object' && parsed !== null && 'input' in parsed ? (parsed as { input: unknown }).input : parsed;
  const id = typeof parsed === 'object' && parsed !== null && typeof (parsed as { id?: unknown }).id === 'string'
    ? (parsed as { id: string }).id
    : 'local_test';
  return { id, input };
}

/** Runs `job` once through the handler, without a platform. Resolves with the job-done body. */
export async function runLocalTest<I>(options: WorkerOptions<I>, job: Job<I>): Promise<Record<string, unknown>> {
  const controller = new AbortController();
  const outcome = await runJob(job, options.handler, {
    signal: controller.signal,
    progress: async (v) => void process.stderr.write(`progress ${JSON.stringify(v)}\n`),
  }, {
    emitStream: async (item) => void process.stderr.write(`stream ${JSON.stringify(item)}\n`),
    returnAggregateStream: options.returnAggregateStream === true,
    hostname: 'local',
    workerId: 'local',
  });
  const body: Record<string, unknown> = { ...outcome.body };
  if (options.refreshWorker) body.stopPod = true;
  process.stdout.write(`${JSON.stringify(body)}\n`);
  if (body.error !== undefined) process.exitCode = 1;
  return body;
}

