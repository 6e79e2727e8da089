// gpufleet as another project sees it: `npm pack` of this repository (which builds dist/), installed
// into a folder outside the repository tree with its own package.json, then a stack there importing
// `gpufleet/provider`, planned and applied with its own `npx gpufleet … --app .` against a listening
// control plane; `gpufleet/client` and `gpufleet/worker` loaded by plain Node (no tsx), and the
// stack type-checked against the shipped declarations. `gpufleet/testing` from the installed package
// (plain Node, its dist/) starts a fleet of real sshd test hosts, a pod runs there and stops.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { listContainers } from '../../testing/index.ts';
import { startFleet } from '../provider/helpers.ts';

const exec = promisify(execFile);
const SLOW = { timeout: 300_000 };

/**
 * the environment without what `npm test` sets for its own package (npm_config_*, npm_package_*), and
 * without GPUFLEET_DEV: the installed package runs its built dist/, as for any user
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') && k !== 'GPUFLEET_DEV'));
  return { ...env, ...extra };
}

/** not run, only type-checked: it fails to compile if the declarations were missing or `any` */
const TYPES = `
import type { PodProps } from 'gpufleet/provider';
import { ApiClient } from 'gpufleet/client';
import { startWorker, type Handler } from 'gpufleet/worker';
import { startTestFleet, type TestFleet } from 'gpufleet/testing';

// @ts-expect-error gpu.count is a number
export const wrong: PodProps = { name: 'x', image: 'busybox:latest', gpu: { id: 'x', count: 'one' } };
export const client: ApiClient = new ApiClient({ url: 'http://127.0.0.1:1', apiKey: 'k' });
export const handler: Handler = async () => ({ ok: true });
export const start: typeof startWorker = startWorker;
export const fleet: () => Promise<TestFleet> = () => startTestFleet({ hosts: 2, gpus: [] });
`;

const STACK = `
import { App, GpufleetStack, NetworkVolume, Pod } from 'gpufleet/provider';

const app = new App();
const stack = new GpufleetStack(app, 'outside');
const data = new NetworkVolume(stack, 'data', { name: 'outside-data', size: 10, dataCenterId: 'dc-test-1' });
new Pod(stack, 'trainer', {
  name: 'outside-trainer',
  image: 'busybox:latest',
  gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 },
  mounts: { network: [{ volumeId: data.id, path: '/data' }] },
});
app.synth();
`;

let cp: TestControlPlane;
let work: string;
let stackDir: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-outside-'));
  expect(path.relative(REPO_ROOT, work).startsWith('..')).toBe(true);
  // `npm pack` runs `prepare`, which builds dist/
  await exec('npm', ['pack', '--pack-destination', work], { cwd: REPO_ROOT, env: cleanEnv(), maxBuffer: 64 << 20 });
  const tarball = path.join(work, (await readdir(work)).find((f) => f.endsWith('.tgz'))!);
  stackDir = path.join(work, 'stack');
  await mkdir(stackDir);
  const repoPkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  await writeFile(
    path.join(stackDir, 'package.json'),
    JSON.stringify({
      name: 'outside-stack',
      private: true,
      type: 'module',
      dependencies: { gpufleet: `file:${tarball}` },
      devDependencies: { tsx: repoPkg.dependencies.tsx },
    }),
  );
  await writeFile(path.join(stackDir, 'cdktf.json'), JSON.stringify({ language: 'typescript', app: 'npx tsx main.ts' }));
  await writeFile(path.join(stackDir, 'main.ts'), STACK);
  await writeFile(path.join(stackDir, 'types.ts'), TYPES);
  await writeFile(
    path.join(stackDir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['main.ts', 'types.ts'] }),
  );
  await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: stackDir, env: cleanEnv(), maxBuffer: 64 << 20 });
  cp = await startFleet();
}, 300_000);
afterAll(async () => {
  await cp?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** `npx gpufleet …` in the stack's folder; async, because the control plane answers from this process */
function gpufleet(key: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['--no-install', 'gpufleet', ...args], { cwd: stackDir, env: cleanEnv({ GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end();
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a stack in its own folder depends on the packed gpufleet and runs `gpufleet plan --app .`', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const plan = await gpufleet(key, ['plan', '--app', '.', '--detailed-exitcode']);
  expect(plan.code, plan.stderr).toBe(2);
  expect(plan.stdout).toContain('  + pod.trainer\n');
  expect(plan.stdout).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');

  const apply = await gpufleet(key, ['apply', '--app', '.', '--auto-approve', '--no-wait']);
  expect(apply.code, apply.stderr).toBe(0);
  const again = await gpufleet(key, ['plan', '--app', '.', '--detailed-exitcode']);
  expect(again.code, again.stdout + again.stderr).toBe(0);
});

test('gpufleet/client and gpufleet/worker load in plain Node from the installed package', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const script = `
    const { ApiClient } = await import('gpufleet/client');
    const worker = await import('gpufleet/worker');
    const api = new ApiClient({ url: process.env.GPUFLEET_URL, apiKey: process.env.GPUFLEET_API_KEY });
    const pods = await api.get('/v2/pods');
    console.log(JSON.stringify({ pods, startWorker: typeof worker.startWorker }));`;
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], {
    cwd: stackDir,
    env: cleanEnv({ GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key }),
  });
  expect(JSON.parse(stdout)).toEqual({ pods: { pods: [] }, startWorker: 'function' });
});

test('the stack type-checks against the shipped declarations', SLOW, async () => {
  const tsc = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
  const run = await exec(process.execPath, [tsc, '-p', stackDir], { cwd: stackDir }).catch((e: { stdout: string; code: number }) => e);
  expect('code' in run ? run.stdout : '').toBe('');
});

/**
 * What another project's test does with `gpufleet/testing`, in plain Node from the installed package:
 * a fleet of two test hosts (two fixture H100s each), a pod on one of them via the REST API, RUNNING
 * as a container of this machine's engine, stopped, then the fleet closed. It prints what it saw.
 */
const FLEET_SCRIPT = `
  const { startTestFleet, ensureTestImage, FIXTURE_GPUS, dockerInspect } = await import('gpufleet/testing');
  const image = await ensureTestImage();
  const fleet = await startTestFleet({ hosts: 2, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3] });
  const seen = { hosts: [], modulePath: import.meta.resolve('gpufleet/testing') };
  try {
    const call = async (path, init = {}) => {
      const res = await fetch(fleet.url + path, {
        method: init.method ?? 'GET',
        headers: { authorization: 'Bearer ' + fleet.keys.user, 'content-type': 'application/json' },
        body: init.json ? JSON.stringify(init.json) : undefined,
      });
      return { status: res.status, body: await res.json() };
    };
    for (const h of fleet.hosts) {
      const r = await fetch(fleet.url + '/v2/hosts/' + h.id, { headers: { authorization: 'Bearer ' + fleet.keys.admin } });
      const b = await r.json();
      seen.hosts.push({ id: h.id, address: h.address, port: h.port, status: b.status, gpus: b.facts.gpus.map((g) => g.typeId) });
    }
    const created = await call('/v2/pods', { method: 'POST', json: { name: 'from-testing', image, args: "sh -c 'trap \\"exit 0\\" TERM; sleep 3600 & wait'", disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
    seen.created = created.status;
    const id = created.body.id;
    const deadline = Date.now() + 90000;
    let pod = created.body;
    while (pod.status !== 'RUNNING' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      pod = (await call('/v2/pods/' + id)).body;
    }
    seen.running = { status: pod.status, machineId: pod.machineId, container: (await dockerInspect('gpufleet-' + id))?.State.Running ?? null };
    const stopped = await call('/v2/pods/' + id + '/action', { method: 'POST', json: { action: 'stop' } });
    seen.stopped = stopped.body.status;
    let running = true;
    while (running && Date.now() < deadline) {
      running = (await dockerInspect('gpufleet-' + id))?.State.Running ?? false;
      if (running) await new Promise((r) => setTimeout(r, 250));
    }
    seen.containerAfterStop = running;
  } finally {
    await fleet.close();
  }
  console.log(JSON.stringify(seen));`;

test('gpufleet/testing from the installed package: a fleet of test hosts, a pod created on it and stopped, all gone after close()', SLOW, async () => {
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', FLEET_SCRIPT], { cwd: stackDir, env: cleanEnv(), maxBuffer: 16 << 20 });
  const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, any>;
  // the installed package's dist/, not the repository's sources
  expect(seen.modulePath).toBe(`file://${path.join(stackDir, 'node_modules/gpufleet/dist/testing/index.js')}`);
  expect(seen.hosts).toHaveLength(2);
  for (const h of seen.hosts) expect(h).toMatchObject({ status: 'READY', gpus: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'] });
  expect(seen.created).toBe(201);
  expect(seen.running.status).toBe('RUNNING');
  expect(seen.hosts.map((h: { id: string }) => h.id)).toContain(seen.running.machineId);
  expect(seen.running.container).toBe(true);
  expect(seen.stopped).toBe('EXITED');
  expect(seen.containerAfterStop).toBe(false);
  // close() removed the containers it made and stopped the hosts' sshd
  for (const h of seen.hosts) {
    expect(await listContainers(`gpufleet.host=${h.id}`)).toEqual([]);
    const refused = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: h.address, port: h.port }, () => (sock.destroy(), resolve(false)));
      sock.on('error', () => resolve(true));
    });
    expect(refused, `${h.address}:${h.port} still listens`).toBe(true);
  }
});
