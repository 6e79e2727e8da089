// The SDK in its own process, as it runs in a container: the test worker (the handler baked into the
// Node test image) under SIGTERM, and runpod-python's local test mode (no RUNPOD_WEBHOOK_GET_JOB).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakePlatform, type FakePlatform, type RecordedCall } from './fake-platform.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HANDLER = path.join(REPO, 'test/harness/worker-handlers/node-test-handler.ts');

let fake: FakePlatform;
let child: ChildProcess | null = null;

beforeEach(async () => {
  fake = await startFakePlatform({ holdMs: 500 });
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = null;
  await fake.close();
});

function spawnWorker(env: Record<string, string>, args: string[] = []): { proc: ChildProcess; exit: Promise<number | null>; out: () => string } {
  const proc = spawn(process.execPath, ['--import', 'tsx', HANDLER, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  child = proc;
  return { proc, exit, out: () => out };
}

const isFinal = (jobId: string) => (c: RecordedCall) => c.jobId === jobId && (c.body as { status?: string }).status !== 'IN_PROGRESS';

describe('worker SDK in its own process', () => {
  it('SIGTERM drains: the in-flight job finishes and is reported, no job is taken after, the process exits 0', async () => {
    const w = spawnWorker(fake.workerEnv('w-term'));
    fake.enqueue({ id: 't1', input: { sleep_ms: 1500, output: 'drained' } });
    await fake.waitFor(fake.pings, (c) => c.query.job_id === 't1', 15_000); // t1 is running
    const termAt = Date.now();
    w.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    fake.enqueue({ id: 't2', input: { output: 'must not run' } });
    const code = await w.exit;
    expect(code, w.out()).toBe(0);
    const done = fake.dones.find(isFinal('t1'));
    expect(done?.body).toEqual({ output: 'drained' });
    expect(done && done.at).toBeGreaterThan(termAt); // reported after the signal: it was drained, not cut
    expect(fake.takes.filter((c) => c.at > termAt + 100)).toEqual([]);
    expect(fake.dones.some((c) => c.jobId === 't2')).toBe(false);
  }, 30_000);

  it('without RUNPOD_WEBHOOK_GET_JOB runs --test_input once (local mode) and prints the job-done body', async () => {
    const w = spawnWorker({}, ['--test_input', JSON.stringify({ input: { output: { hi: 1 } } })]);
    expect(await w.exit, w.out()).toBe(0);
    expect(w.out()).toContain('{"output":{"hi":1}}');
  }, 30_000);

  it('local mode exits 1 and prints the error payload when the handler throws', async () => {
    const w = spawnWorker({}, ['--test_input', JSON.stringify({ input: { fail: 'nope' } })]);
    expect(await w.exit).toBe(1);
    const line = w.out().split('\n').find((l) => l.startsWith('{"error"')) ?? '';
    expect((JSON.parse(JSON.parse(line).error as string) as { error_message: string }).error_message).toBe('nope');
  }, 30_000);
});
