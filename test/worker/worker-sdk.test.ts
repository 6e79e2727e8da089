// The TypeScript worker SDK against a listening test double of the platform's side of the worker
// protocol: what the SDK sends, exactly as runpod-python's worker sends it (runpod-compat.md 3.2).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { progressUpdate, startWorker, WorkerConfigError, type Handler, type WorkerHandle, type WorkerOptions } from '../../worker/index.ts';
import { startFakePlatform, type FakePlatform, type RecordedCall } from './fake-platform.ts';

const quiet = { debug: () => undefined, info: () => undefined, error: () => undefined };
let fake: FakePlatform;
const workers: WorkerHandle[] = [];

beforeEach(async () => {
  fake = await startFakePlatform({ holdMs: 500 });
});
afterEach(async () => {
  // a failed test may leave a handler hanging; do not let the drain hang the suite
  await Promise.race([Promise.all(workers.splice(0).map((w) => w.stop())), sleep(3000)]);
  await fake.close();
});

function start(handler: Handler<unknown>, opts: Partial<WorkerOptions<unknown>> = {}, workerId = 'w1'): WorkerHandle {
  const w = startWorker({ handler, handleSignals: false, logger: quiet, env: fake.workerEnv(workerId), ...opts });
  workers.push(w);
  return w;
}

const finalDone = (jobId: string) => (c: RecordedCall) => c.jobId === jobId && (c.body as { status?: string }).status !== 'IN_PROGRESS';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('worker SDK: results', () => {
  it('posts a returned value as {output} to job-done with the URL, headers and content-type runpod-python uses', async () => {
    start(() => ({ doubled: 42 }));
    fake.enqueue({ id: 'j1', input: { n: 21 } });
    const done = await fake.waitFor(fake.dones, finalDone('j1'));
    expect(done.path).toBe('/v2/ep1/job-done/w1/j1'); // $RUNPOD_POD_ID and $ID substituted
    expect(done.query).toEqual({ gpu: 'test', isStream: 'false' });
    expect(done.headers.authorization).toBe('worker-token-1'); // raw key, no Bearer
    expect(done.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(done.body).toEqual({ output: { doubled: 42 } });
    const take = fake.takes[0] as RecordedCall;
    expect(take.path).toBe('/v2/ep1/job-take/w1'); // $ID in GET_JOB is the worker id
    expect(take.query).toEqual({ gpu: 'test', job_in_progress: '0' });
  });

  it('awaits a promise and pops error / refresh_worker from a returned object; {} and undefined as runpod-python', async () => {
    const outputs: unknown[] = [{ a: 1, error: 'bad row', refresh_worker: true }, {}, undefined];
    let i = 0;
    start(async () => {
      await sleep(20);
      return outputs[i++];
    });
    for (const id of ['p1', 'p2', 'p3']) fake.enqueue({ id, input: {} });
    expect((await fake.waitFor(fake.dones, finalDone('p1'))).body).toEqual({ output: { a: 1 }, error: 'bad row', stopPod: true });
    expect((await fake.waitFor(fake.dones, finalDone('p2'))).body).toEqual({});
    expect((await fake.waitFor(fake.dones, finalDone('p3'))).body).toEqual({ output: null });
  });

  it('streams an async generator: one job-stream post per item, then a final job-done with [] and isStream=true', async () => {
    start(async function* () {
      yield 'a';
      await sleep(10);
      yield { token: 'b' };
    });
    fake.enqueue({ id: 's1', input: {} });
    const done = await fake.waitFor(fake.dones, finalDone('s1'));
    expect(done.query.isStream).toBe('true');
    expect(done.body).toEqual({ output: [] });
    const streams = fake.streams.filter((c) => c.jobId === 's1');
    expect(streams.map((c) => c.body)).toEqual([{ output: 'a' }, { output: { token: 'b' } }]);
    expect(streams[0]?.path).toBe('/v2/ep1/job-stream/w1/s1');
    expect(streams.every((c) => c.query.isStream === 'false')).toBe(true);
    expect(streams.every((c) => (c.at <= done.at))).toBe(true);
  });

  it('returnAggregateStream puts every streamed item in the final output', async () => {
    start(async function* () {
      yield 1;
      yield 2;
    }, { returnAggregateStream: true });
    fake.enqueue({ id: 's2', input: {} });
    expect((await fake.waitFor(fake.dones, finalDone('s2'))).body).toEqual({ output: [1, 2] });
  });

  it('progressUpdate posts IN_PROGRESS bodies to job-done, in order and before the final result', async () => {
    start(async (job) => {
      void progressUpdate(job, 'loading'); // not awaited: must still arrive first
      await progressUpdate(job, { pct: 50 });
      return 'ok';
    });
    fake.enqueue({ id: 'g1', input: {} });
    await fake.waitFor(fake.dones, finalDone('g1'));
    expect(fake.dones.filter((c) => c.jobId === 'g1').map((c) => [c.body, c.query.isStream])).toEqual([
      [{ status: 'IN_PROGRESS', output: 'loading' }, 'false'],
      [{ status: 'IN_PROGRESS', output: { pct: 50 } }, 'false'],
      [{ output: 'ok' }, 'false'],
    ]);
  });

  it('turns a thrown error into the error payload: a JSON string with type, message, traceback, host and worker', async () => {
    const env = fake.workerEnv('w1', fake.origin, { RUNPOD_POD_HOSTNAME: 'host-a' });
    start(() => {
      throw new TypeError('input.prompt is required');
    }, { env });
    fake.enqueue({ id: 'e1', input: {} });
    const body = (await fake.waitFor(fake.dones, finalDone('e1'))).body as { error: string; output?: unknown };
    expect(Object.keys(body)).toEqual(['error']);
    const info = JSON.parse(body.error) as Record<string, string>;
    expect(info).toMatchObject({ error_type: 'TypeError', error_message: 'input.prompt is required', hostname: 'host-a', worker_id: 'w1' });
    expect(info.error_traceback).toContain('input.prompt is required');
    expect(Object.keys(info).sort()).toEqual(['error_message', 'error_traceback', 'error_type', 'hostname', 'runpod_version', 'worker_id']);
  });

  it('an error thrown mid-stream ends the stream and reports the error with isStream=true', async () => {
    start(async function* () {
      yield 'first';
      throw new Error('stream broke');
    });
    fake.enqueue({ id: 's3', input: {} });
    const done = await fake.waitFor(fake.dones, finalDone('s3'));
    expect(done.query.isStream).toBe('true');
    expect((JSON.parse((done.body as { error: string }).error) as { error_message: string }).error_message).toBe('stream broke');
    expect(fake.streams.filter((c) => c.jobId === 's3')).toHaveLength(1);
  });
});

describe('worker SDK: worker lifecycle', () => {
  it('refreshWorker reports stopPod:true and stops taking jobs after the job', async () => {
    const w = start(() => 'once', { refreshWorker: true });
    fake.enqueue({ id: 'r1', input: {} });
    expect((await fake.waitFor(fake.dones, finalDone('r1'))).body).toEqual({ output: 'once', stopPod: true });
    await w.done;
    const takes = fake.takes.length;
    fake.enqueue({ id: 'r2', input: {} });
    await sleep(300);
    expect(fake.takes.length).toBe(takes);
    expect(fake.dones.some((c) => c.jobId === 'r2')).toBe(false);
  });

  it('job-stop aborts the in-flight job: its signal fires, nothing is posted for it, and the next job runs', async () => {
    let aborted = false;
    let started = (): void => undefined;
    const k1Started = new Promise<void>((resolve) => (started = resolve));
    start(async (job, ctx) => {
      if ((job.input as { hang?: boolean }).hang) {
        started();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => ((aborted = true), resolve())));
        return 'should not be posted';
      }
      return 'next';
    });
    fake.enqueue({ id: 'k1', input: { hang: true } });
    await k1Started;
    await fake.waitFor(fake.stopPolls, (c) => c.workerId === 'w1');
    expect(fake.stopPolls[0]?.path).toBe('/v2/ep1/job-stop/w1');
    fake.stopJobs(['k1']);
    fake.enqueue({ id: 'k2', input: {} });
    await fake.waitFor(fake.dones, finalDone('k2'));
    await sleep(100);
    expect(aborted).toBe(true);
    expect(fake.dones.some((c) => c.jobId === 'k1')).toBe(false);
  });

  it('pings carry the in-progress job ids (job_id comma list) and runpod_version, with the raw key', async () => {
    start(async (job) => {
      await sleep(Number((job.input as { ms: number }).ms));
      return 1;
    }, { concurrency: 2 });
    fake.enqueue({ id: 'q1', input: { ms: 1200 } });
    fake.enqueue({ id: 'q2', input: { ms: 1200 } });
    const busy = await fake.waitFor(fake.pings, (c) => (c.query.job_id ?? '').split(',').length === 2, 5000);
    expect(busy.query.job_id?.split(',').sort()).toEqual(['q1', 'q2']);
    expect(busy.path).toBe('/v2/ep1/ping/w1');
    expect(busy.query.gpu).toBe('test');
    expect(busy.query.runpod_version).toMatch(/gpufleet/);
    expect(busy.headers.authorization).toBe('worker-token-1');
    await fake.waitFor(fake.dones, finalDone('q2'));
    const after = Date.now();
    const idle = await fake.waitFor(fake.pings, (c) => c.at > after + 50, 3000);
    expect(idle.query.job_id).toBeUndefined();
  });

  it('concurrency > 1 takes through job-take-batch with batch_size and runs the jobs at once', async () => {
    let running = 0;
    let most = 0;
    start(async () => {
      most = Math.max(most, ++running);
      await sleep(600);
      running--;
      return 'b';
    }, { concurrency: 3 });
    await fake.waitFor(fake.takes, () => true);
    for (const id of ['b1', 'b2', 'b3']) fake.enqueue({ id, input: {} });
    for (const id of ['b1', 'b2', 'b3']) await fake.waitFor(fake.dones, finalDone(id), 5000);
    expect(most).toBe(3);
    const first = fake.takes[0] as RecordedCall;
    expect(first.path).toBe('/v2/ep1/job-take-batch/w1');
    expect(first.query).toMatchObject({ batch_size: '3', job_in_progress: '0' });
  });

  it('backs off 5 s after a 429 on job-take', async () => {
    fake.throttleTakes(1);
    start(() => 'x');
    await fake.waitFor(fake.takes, () => fake.takes.length >= 2, 8000);
    const [a, b] = fake.takes as [RecordedCall, RecordedCall];
    expect(b.at - a.at).toBeGreaterThanOrEqual(4900);
  }, 15_000);

  it('refuses a job-take URL without "?" (the protocol appends its parameters with &)', () => {
    const env = { ...fake.workerEnv('w1'), RUNPOD_WEBHOOK_GET_JOB: `${fake.origin}/v2/ep1/job-take/$ID` };
    expect(() => startWorker({ handler: () => 1, env, handleSignals: false, logger: quiet })).toThrow(WorkerConfigError);
  });
});
