// `gpufleet pods logs` follows GET /v2/pods/{id}/logs (server-sent events) until Ctrl-C: here the
// pod's system log (its events), which needs no container, from a record-only control plane.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { H100, startPodsControlPlane, uniqueName } from '../api/pods-helpers.ts';

let cp: TestControlPlane;
let key: string;

beforeAll(async () => {
  cp = await startPodsControlPlane();
  key = (await cp.newAccount('read_write')).key;
});
afterAll(async () => cp?.close());

test('pods logs --source system prints the pod events as lines, and SIGINT ends it with exit 0', async () => {
  const res = await cp.api('/v2/pods', { method: 'POST', key, json: { name: uniqueName('logs'), image: 'busybox:1.36', gpu: { id: H100, count: 1 } } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), 'pods', 'logs', id, '--source', 'system'], {
    cwd: REPO_ROOT,
    env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no log line; stderr: ${stderr}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) (clearTimeout(t), resolve());
    });
  });
  expect(stdout.split('\n')[0]).toMatch(/^\[system\] \S/);
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
}, 40_000);
