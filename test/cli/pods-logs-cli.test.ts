// `gpufleet pods logs` as `docker logs` / `kubectl logs`: without -f it prints the tail and exits by
// itself; with -f/--follow it keeps printing until Ctrl-C (exit 0). Here the pod's system log (its
// events), which needs no container, from a record-only control plane; test/cli/pods-host-cli.test.ts
// reads a real container's.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { H100, startPodsControlPlane, uniqueName } from '../api/pods-helpers.ts';
import { runCli } from './run-cli.ts';

let cp: TestControlPlane;
let key: string;

beforeAll(async () => {
  cp = await startPodsControlPlane();
  key = (await cp.newAccount('read_write')).key;
});
afterAll(async () => cp?.close());

async function newPod(): Promise<string> {
  const res = await cp.api('/v2/pods', { method: 'POST', key, json: { name: uniqueName('logs'), image: 'busybox:1.36', gpu: { id: H100, count: 1 } } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

test('pods logs without -f prints the system log there is and exits 0 by itself', async () => {
  const id = await newPod();
  const r = await runCli(['pods', 'logs', id, '--source', 'system'], { url: cp.url, key }, 20_000);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  const lines = r.stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) expect(l).toMatch(/^\[system\] \S/);
  // --json: one event's data per line, the end event last
  const j = await runCli(['pods', 'logs', id, '--source', 'system', '--json'], { url: cp.url, key }, 20_000);
  const events = j.stdout.trim().split('\n').map((l) => JSON.parse(l) as { source?: string; event?: string });
  expect(events.at(-1)).toMatchObject({ event: 'end' });
  expect(events.slice(0, -1).every((e) => e.source === 'system')).toBe(true);
}, 40_000);

test('pods logs -f keeps following (still running after the first lines) until SIGINT, then exits 0', async () => {
  const id = await newPod();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), 'pods', 'logs', id, '--source', 'system', '-f'], {
    cwd: REPO_ROOT,
    env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r((exitCode = code))));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no log line; stderr: ${stderr}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) (clearTimeout(t), resolve());
    });
  });
  expect(stdout.split('\n')[0]).toMatch(/^\[system\] \S/);
  // a new event of the pod arrives on the open stream
  expect((await cp.api(`/v2/pods/${id}/action`, { method: 'POST', key, json: { action: 'stop' } })).status).toBe(200);
  const before = stdout.split('\n').length;
  for (let i = 0; i < 100 && stdout.split('\n').length === before; i++) await new Promise((r) => setTimeout(r, 100));
  expect(stdout.split('\n').length).toBeGreaterThan(before);
  expect(exitCode).toBeUndefined();
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
}, 40_000);
