// The test workers' handler, chosen by the job input with the same vocabulary as
// python_test_handler.py: {sleep_ms, progress: [..], fail: "msg", output: X, refresh: true,
// stream: [..], stream_delay_ms}, in that order: sleep (honouring job-stop), send each progress value,
// throw `fail`, then return `output` (default {"echo": input}) with refresh_worker when `refresh`;
// with `stream` it yields the items instead (then throws `fail` if set). Baked into the Node worker
// image (node-test-handler.ts) and run in-process by the job tests (test/api/jobs/in-process-workers.ts).
import { progressUpdate, type Job, type JobContext } from '../../../worker/index.ts';

export interface TestInput {
  sleep_ms?: number;
  progress?: unknown[];
  fail?: string;
  output?: unknown;
  refresh?: boolean;
  stream?: unknown[];
  stream_delay_ms?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

async function* streamItems(input: TestInput, signal: AbortSignal): AsyncGenerator<unknown> {
  for (const item of input.stream ?? []) {
    if (input.stream_delay_ms) await sleep(input.stream_delay_ms, signal);
    yield item;
  }
  if (input.fail) throw new Error(input.fail);
}

async function respond(job: Job<TestInput>, input: TestInput, signal: AbortSignal): Promise<unknown> {
  if (input.sleep_ms) await sleep(input.sleep_ms, signal);
  for (const p of input.progress ?? []) await progressUpdate(job, p);
  if (input.fail) throw new Error(input.fail);
  const out = 'output' in input ? input.output : { echo: job.input };
  return input.refresh && typeof out === 'object' && out !== null ? { ...out, refresh_worker: true } : out;
}

export function testJobHandler(job: Job<TestInput>, ctx: JobContext): unknown {
  const input: TestInput = typeof job.input === 'object' && job.input !== null ? job.input : {};
  if (Array.isArray(input.stream)) return streamItems(input, ctx.signal);
  return respond(job, input, ctx.signal);
}
