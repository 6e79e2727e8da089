// The test worker images (test/harness/worker-images.ts) really work, and the TypeScript SDK speaks
// the protocol as runpod-python's own worker does: both images, started with the same RUNPOD_*
// environment against the same kind of test double, get the same jobs and must send the same calls.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerBridgeGateway, dockerAvailable, removeContainersByLabel, runDocker } from '../../testing/index.ts';
import { ensureNodeWorkerImage, ensurePythonWorkerImage } from '../harness/worker-images.ts';
import { startFakePlatform, type FakePlatform, type RecordedCall } from './fake-platform.ts';

const LABEL = `gpufleet-test-worker-images=${randomUUID().slice(0, 8)}`;
const hasDocker = await dockerAvailable();
const isRoot = process.getuid?.() === 0;

const CASES: Array<{ id: string; input: Record<string, unknown> }> = [
  { id: 'slow', input: { sleep_ms: 2500, output: 'slept' } },
  { id: 'echo', input: { msg: 'hi' } },
  { id: 'value', input: { output: 'plain string' } },
  { id: 'empty', input: { output: {} } },
  { id: 'dict-error', input: { output: { a: 1, error: 'bad row' } } },
  { id: 'progress', input: { progress: ['loading', 50], output: 'done' } },
  { id: 'fail', input: { fail: 'boom' } },
  { id: 'refresh', input: { refresh: true, output: { r: 1 } } },
];
const STREAM = { id: 'stream', input: { stream: ['a', { b: 2 }], stream_delay_ms: 10 } };

/** Starts `image` as a worker of `fake` (reached through the bridge gateway). */
async function startContainer(image: string, fake: FakePlatform, workerId: string, extra: Record<string, string> = {}): Promise<void> {
  const env = fake.workerEnv(workerId, `http://${await dockerBridgeGateway()}:${fake.port}`, { RUNPOD_PING_INTERVAL: '1000', ...extra });
  delete env.RUNPOD_LOG_LEVEL;
  const args = ['run', '-d', '--rm', '--label', LABEL, '--name', `gf-wk-${workerId}-${randomUUID().slice(0, 6)}`];
  for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
  await runDocker([...args, image]);
}

interface Run {
  fake: FakePlatform;
  streamFake: FakePlatform;
}

/** Runs every case through `image`: one container for the plain cases, one for the stream case. */
async function runCases(image: string, who: string): Promise<Run> {
  const fake = await startFakePlatform({ host: '0.0.0.0', holdMs: 2000 });
  const streamFake = await startFakePlatform({ host: '0.0.0.0', holdMs: 2000 });
  await startContainer(image, fake, `${who}-1`);
  await startContainer(image, streamFake, `${who}-2`, { GPUFLEET_TEST_HANDLER: 'stream' });
  for (const c of CASES) fake.enqueue({ id: c.id, input: c.input });
  streamFake.enqueue({ id: STREAM.id, input: STREAM.input });
  for (const c of CASES) await fake.waitFor(fake.dones, isFinal(c.id), 60_000);
  await streamFake.waitFor(streamFake.dones, isFinal(STREAM.id), 60_000);
  await new Promise((r) => setTimeout(r, 300)); // late progress posts (python sends them from a thread)
  return { fake, streamFake };
}

const isFinal = (id: string) => (c: RecordedCall) => c.jobId === id && (c.body as { status?: string }).status !== 'IN_PROGRESS';
const final = (run: Run, id: string) => run.fake.dones.find(isFinal(id)) as RecordedCall;
const progressOf = (run: Run, id: string) =>
  run.fake.dones.filter((c) => c.jobId === id && (c.body as { status?: string }).status === 'IN_PROGRESS').map((c) => c.body);

describe.skipIf(!hasDocker || !isRoot)('test worker images', () => {
  let node: Run;
  let python: Run;

  beforeAll(async () => {
    await removeContainersByLabel(LABEL);
    const [nodeImage, pythonImage] = await Promise.all([ensureNodeWorkerImage(), ensurePythonWorkerImage()]);
    [node, python] = await Promise.all([runCases(nodeImage, 'node'), runCases(pythonImage, 'py')]);
  }, 900_000);

  afterAll(async () => {
    await removeContainersByLabel(LABEL);
    await Promise.all([node, python].flatMap((r) => (r ? [r.fake.close(), r.streamFake.close()] : [])));
  }, 60_000);

  it('the node image runs its own node: `node -e console.log(1)` prints 1', async () => {
    const { stdout } = await runDocker(['run', '--rm', '--label', LABEL, await ensureNodeWorkerImage(), 'node', '-e', 'console.log(1)']);
    expect(stdout.trim()).toBe('1');
  });

  it('the python image imports the unmodified runpod client and skips the auto system checks', async () => {
    const image = await ensurePythonWorkerImage();
    const { stdout } = await runDocker(['run', '--rm', '--label', LABEL, image, 'python3', '-c',
      'import os, runpod, runpod.serverless; print(runpod.__file__, os.environ["RUNPOD_SKIP_AUTO_SYSTEM_CHECKS"])']);
    expect(stdout.trim()).toBe('/opt/gpufleet/runpod-python/runpod/__init__.py true');
  });

  it.each(CASES.filter((c) => c.id !== 'fail').map((c) => c.id))('case %s: the node SDK posts the same final job-done body as runpod-python', (id) => {
    expect(final(node, id).body).toEqual(final(python, id).body);
    expect(final(node, id).query).toEqual(final(python, id).query);
  });

  it('case fail: both post {error: <JSON string>} with the same keys and the message', () => {
    for (const run of [node, python]) {
      const body = final(run, 'fail').body as Record<string, string>;
      expect(Object.keys(body)).toEqual(['error']);
      const info = JSON.parse(body.error as string) as Record<string, string>;
      expect(Object.keys(info).sort()).toEqual(['error_message', 'error_traceback', 'error_type', 'hostname', 'runpod_version', 'worker_id']);
      expect(info.error_message).toBe('boom');
    }
  });

  it('progress updates: the same IN_PROGRESS bodies on job-done, before the final result', () => {
    for (const run of [node, python]) {
      const all = run.fake.dones.filter((c) => c.jobId === 'progress');
      expect(all.at(-1)?.body).toEqual({ output: 'done' });
    }
    expect(progressOf(node, 'progress')).toEqual([{ status: 'IN_PROGRESS', output: 'loading' }, { status: 'IN_PROGRESS', output: 50 }]);
    expect(progressOf(python, 'progress')).toEqual(expect.arrayContaining(progressOf(node, 'progress')));
    expect(progressOf(python, 'progress')).toHaveLength(2);
  });

  it('streaming: the same job-stream posts and the same final body and query', () => {
    const streams = (run: Run) => run.streamFake.streams.map((c) => [c.path.replace(/\/[^/]+-2\//, '/W/'), c.query, c.body]);
    expect(streams(node)).toEqual(streams(python));
    expect(streams(node)).toHaveLength(2);
    const done = (run: Run) => run.streamFake.dones.find(isFinal(STREAM.id));
    expect(done(node)?.body).toEqual(done(python)?.body);
    expect(done(node)?.query).toEqual({ gpu: 'test', isStream: 'true' });
    expect(done(python)?.query).toEqual({ gpu: 'test', isStream: 'true' });
  });

  it('the same headers on job-done: raw Authorization and the form content-type', () => {
    for (const run of [node, python]) {
      const h = final(run, 'echo').headers;
      expect(h.authorization).toBe('worker-token-1');
      expect(h['content-type']).toBe('application/x-www-form-urlencoded');
      expect(h['x-request-id']).toBe('echo');
    }
  });

  it('the same job-take query, job-stop path and pings that carry the running job id', () => {
    for (const [run, w] of [[node, 'node-1'], [python, 'py-1']] as const) {
      expect(run.fake.takes[0]?.path).toBe(`/v2/ep1/job-take/${w}`);
      expect(run.fake.takes[0]?.query).toEqual({ gpu: 'test', job_in_progress: '0' });
      expect(run.fake.stopPolls[0]?.path).toBe(`/v2/ep1/job-stop/${w}`);
      expect(run.fake.pings.some((c) => c.query.job_id === 'slow' && c.path === `/v2/ep1/ping/${w}`)).toBe(true);
    }
  });
});
