// `gpufleet pods create --wait` and `pods logs` against a real sshd test host, the real Docker
// engine and the control plane's provisioner: the create options reach the container (args, env,
// disk, ports), --wait returns once it runs, `logs` prints the tail of its output and exits by
// itself, `logs -f` keeps printing new lines until Ctrl-C.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { runCli } from './run-cli.ts';

const H100 = FIXTURE_GPUS.H100_80GB_HBM3.name;
// 30 numbered lines, then one more every 200 ms, for as long as it runs
const PRINTER = `sh -c 'i=1; while [ $i -le 30 ]; do echo line-$i; i=$((i+1)); done; trap "exit 0" TERM; while true; do sleep 0.2; echo tick-$i; i=$((i+1)); done'`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let image: string;
let env: { url: string; key: string };
let podId = '';

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `cli-host-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-cli' });
  env = { url: cp.url, key: (await cp.newAccount('read_write')).key };
}, 120_000);
afterAll(() => disposeHostWorld({ cp, host, hostId }), 60_000);

test('pods create --args --disk --env --port --gpu --wait: exits once RUNNING, and the container has what the options said', async () => {
  const r = await runCli(
    ['pods', 'create', '--name', 'printer', '--image', image, '--gpu', H100, '--args', PRINTER, '--disk', '5', '--env', 'A=1', '--env', 'GREETING=hello world', '--port', '8080/http', '--wait', '--json'],
    env,
    120_000,
  );
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const pod = JSON.parse(r.stdout) as { id: string; status: string; disk: number; ports: string[]; env: Record<string, string> };
  podId = pod.id;
  expect(pod).toMatchObject({ status: 'RUNNING', disk: 5, ports: ['8080/http'], env: { A: '1', GREETING: 'hello world' } });
  const c = await dockerInspect(`gpufleet-${pod.id}`);
  expect(c?.State.Running).toBe(true);
  expect(c?.Config.Env).toEqual(expect.arrayContaining(['A=1', 'GREETING=hello world']));
  expect([...(c?.Config.Entrypoint ?? []), ...(c?.Config.Cmd ?? [])].join(' ')).toContain('line-$i');
}, 150_000);

test('pods logs --tail 5 prints the last five lines there are and exits 0 by itself, while the container keeps printing', async () => {
  expect(podId).not.toBe('');
  // the first 30 lines come at once; then a tick every 200 ms: the tail is 5 consecutive lines
  const r = await runCli(['pods', 'logs', podId, '--tail', '5', '--source', 'container'], env, 30_000);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(5);
  const n = lines.map((l) => Number(/^(?:line|tick)-(\d+)$/.exec(l)?.[1]));
  expect(n.every((x, i) => x === n[0]! + i)).toBe(true);
  expect(n[0]).toBeGreaterThanOrEqual(26);
}, 60_000);

test('pods logs -f follows: new lines keep coming after the tail, and SIGINT ends it with exit 0', async () => {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), 'pods', 'logs', podId, '-f', '--tail', '1', '--source', 'container'], {
    cwd: REPO_ROOT,
    env: { ...process.env, GPUFLEET_URL: env.url, GPUFLEET_API_KEY: env.key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  // the tail (1 line) and then live ticks: 4 lines means it followed
  for (let i = 0; i < 300 && stdout.split('\n').filter(Boolean).length < 4; i++) await new Promise((r) => setTimeout(r, 100));
  const lines = stdout.split('\n').filter(Boolean);
  expect(lines.length, stderr).toBeGreaterThanOrEqual(4);
  expect(child.exitCode).toBeNull();
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
}, 60_000);
