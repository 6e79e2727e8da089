// The confirmation prompt of `apply` and `destroy` (docs/cli.md, "The prompt of apply and destroy"),
// run as a user runs it: `node bin/gpufleet.js` in a child process against a listening control plane.
// End of input (stdin closed, as `</dev/null`) is the answer "no"; SIGINT or SIGTERM sent while the
// command waits at the prompt exits 130/143, and so does Ctrl-C typed on a terminal (under `script`).
// Either way nothing is applied and the stack lock is free at once: the next `--auto-approve` run goes
// ahead without `force-unlock`.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ApiClient, ApiError } from '../../client/api-client.ts';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { listPods, startFleet } from '../provider/helpers.ts';

const SLOW = { timeout: 180_000 };
const PROMPT = 'Enter a value: ';

let cp: TestControlPlane;
let synthDir: string;
let tfJson: string;
beforeAll(async () => {
  cp = await startFleet();
  synthDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cli-prompt-'));
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/main.ts'], { cwd: REPO_ROOT, env: { ...process.env, CDKTF_OUTDIR: synthDir } });
  tfJson = path.join(synthDir, 'stacks/example/cdk.tf.json');
}, 120_000);
afterAll(async () => {
  await cp?.close();
  await rm(synthDir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `stdin: 'closed'` is `</dev/null`; `'open'` is a pipe nobody writes to (a user who has not answered yet) */
function start(key: string, args: string[], stdin: 'closed' | 'open'): { child: ChildProcess; done: Promise<Run>; output: () => string } {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key, NO_COLOR: '1' },
    stdio: [stdin === 'closed' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, output: () => stdout + stderr };
}

const run = (key: string, args: string[], stdin: 'closed' | 'open' = 'closed') => start(key, args, stdin).done;

async function lockHolder(api: ApiClient): Promise<string | null> {
  try {
    return (await api.get<{ holder: string }>('/v2/stack-locks/example')).holder;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

async function owned(api: ApiClient): Promise<{ pods: number; volumes: number }> {
  const volumes = (await api.get<{ networkVolumes: unknown[] }>('/v2/network-volumes')).networkVolumes;
  return { pods: (await listPods(api)).length, volumes: volumes.length };
}

/** resolves once the child has printed the prompt and is waiting for an answer */
async function atPrompt(p: { done: Promise<Run>; output: () => string }): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  void p.done.then(() => (exited = true));
  while (!p.output().includes(PROMPT)) {
    if (exited) throw new Error(`exited before the prompt:\n${p.output()}`);
    if (Date.now() > deadline) throw new Error(`no prompt within 60 s:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('apply and destroy with stdin closed at the prompt: "cancelled", exit 1, nothing changed, the lock free', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const api = new ApiClient({ url: cp.url, apiKey: key });

  const apply = await run(key, ['apply', '--tf-json', tfJson, '--no-wait']);
  expect(apply.stdout).toContain(PROMPT);
  expect(apply.stderr).toBe('error: Apply cancelled.\n');
  expect(apply.code).toBe(1);
  expect(await owned(api)).toEqual({ pods: 0, volumes: 0 });
  expect(await lockHolder(api)).toBeNull();

  // at once, no force-unlock
  const applied = await run(key, ['apply', '--tf-json', tfJson, '--auto-approve', '--no-wait']);
  expect(applied.code, applied.stderr).toBe(0);
  expect(await owned(api)).toEqual({ pods: 2, volumes: 1 });

  const destroy = await run(key, ['destroy', '--tf-json', tfJson, '--no-wait']);
  expect(destroy.stdout).toContain(PROMPT);
  expect(destroy.stderr).toBe('error: Destroy cancelled.\n');
  expect(destroy.code).toBe(1);
  expect(await owned(api)).toEqual({ pods: 2, volumes: 1 });
  expect(await lockHolder(api)).toBeNull();

  const destroyed = await run(key, ['destroy', '--tf-json', tfJson, '--auto-approve']);
  expect(destroyed.code, destroyed.stderr).toBe(0);
  expect(await owned(api)).toEqual({ pods: 0, volumes: 0 });
});

test('SIGINT sent while apply waits at the prompt: exit 130, nothing applied, the lock released', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const api = new ApiClient({ url: cp.url, apiKey: key });

  const waiting = start(key, ['apply', '--tf-json', tfJson, '--no-wait'], 'open');
  await atPrompt(waiting);
  expect(await lockHolder(api)).toMatch(/ \(apply, [0-9a-f]{6}\)$/); // held while it waits
  waiting.child.kill('SIGINT');
  const r = await waiting.done;
  expect(r.stderr).toContain('Interrupted: stopped before finishing; the stack lock is released.');
  expect([r.code, r.signal]).toEqual([130, null]);
  expect(await owned(api)).toEqual({ pods: 0, volumes: 0 });
  expect(await lockHolder(api)).toBeNull();

  const applied = await run(key, ['apply', '--tf-json', tfJson, '--auto-approve', '--no-wait']);
  expect(applied.code, applied.stderr).toBe(0);
});

test('SIGTERM sent while destroy waits at the prompt: exit 143, nothing destroyed, the lock released', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const api = new ApiClient({ url: cp.url, apiKey: key });
  const applied = await run(key, ['apply', '--tf-json', tfJson, '--auto-approve', '--no-wait']);
  expect(applied.code, applied.stderr).toBe(0);

  const waiting = start(key, ['destroy', '--tf-json', tfJson], 'open');
  await atPrompt(waiting);
  expect(await lockHolder(api)).toMatch(/ \(destroy, [0-9a-f]{6}\)$/);
  waiting.child.kill('SIGTERM');
  const r = await waiting.done;
  expect([r.code, r.signal]).toEqual([143, null]);
  expect(await owned(api)).toEqual({ pods: 2, volumes: 1 });
  expect(await lockHolder(api)).toBeNull();

  const destroyed = await run(key, ['destroy', '--tf-json', tfJson, '--auto-approve']);
  expect(destroyed.code, destroyed.stderr).toBe(0);
  expect(await owned(api)).toEqual({ pods: 0, volumes: 0 });
});

/** util-linux `script` gives the child a terminal: readline then reads Ctrl-C as a key, not a signal */
const hasScript = spawnSync('script', ['--version']).status === 0;

test.skipIf(!hasScript)('Ctrl-C typed on a terminal at the prompt: exit 130, the lock released', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const api = new ApiClient({ url: cp.url, apiKey: key });
  const command = `${JSON.stringify(process.execPath)} bin/gpufleet.js apply --tf-json ${JSON.stringify(tfJson)} --no-wait; echo "exit=$?"`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: REPO_ROOT, env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout: output, stderr: '' })));
  await atPrompt({ done, output: () => output });
  child.stdin.write('\x03');
  await done;
  expect(output).toContain('Interrupted: stopped before finishing; the stack lock is released.');
  expect(output).toMatch(/exit=130\r?\n/);
  expect(await owned(api)).toEqual({ pods: 0, volumes: 0 });
  expect(await lockHolder(api)).toBeNull();
});
