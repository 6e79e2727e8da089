// `gpufleet pods …` run as the real bin against a listening control plane (record-only hosts, no
// provisioner): every verb's --json equals what the API answers, a refused request exits 1 with the
// problem detail and its errors, wrong usage exits 2.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { H100, startPodsControlPlane, uniqueName } from '../api/pods-helpers.ts';
import { runCli } from './run-cli.ts';

let cp: TestControlPlane;
let env: { url: string; key: string };

beforeAll(async () => {
  cp = await startPodsControlPlane();
  const user = await cp.newAccount('read_write');
  env = { url: cp.url, key: user.key };
});
afterAll(async () => cp?.close());

async function apiPod(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await cp.api(`/v2/pods/${id}`, { key: env.key });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** the fields that do not move between two reads of one pod */
const stable = (p: Record<string, unknown>) => ({ id: p.id, name: p.name, status: p.status, image: p.image, gpu: p.gpu, env: p.env, dataCenterId: p.dataCenterId });

describe('gpufleet pods', () => {
  test('create, list, get, stop, start, terminate: --json parses and matches the API', async () => {
    const name = uniqueName('cli');
    const created = await runCli(['pods', 'create', '--name', name, '--image', 'busybox:1.36', '--gpu', H100, '--gpu-count', '1', '--env', 'A=1', '--json'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const pod = JSON.parse(created.stdout) as Record<string, unknown> & { id: string };
    expect(pod).toMatchObject({ name, image: 'busybox:1.36', gpu: { id: H100, count: 1 }, env: { A: '1' } });
    expect(stable(pod)).toEqual(stable((await apiPod(pod.id)).body));

    const list = await runCli(['pods', 'list', '--json'], env);
    expect(list.code).toBe(0);
    const listed = (JSON.parse(list.stdout) as { id: string }[]).find((p) => p.id === pod.id);
    expect(listed).toBeDefined();
    const apiList = (await (await cp.api('/v2/pods', { key: env.key })).json()) as { pods: { id: string }[] };
    expect(JSON.parse(list.stdout)).toEqual(apiList.pods);

    const got = await runCli(['pods', 'get', pod.id, '--json'], env);
    expect(got.code).toBe(0);
    expect(stable(JSON.parse(got.stdout) as Record<string, unknown>)).toEqual(stable((await apiPod(pod.id)).body));

    const stopped = await runCli(['pods', 'stop', pod.id, '--json'], env);
    expect(stopped.code).toBe(0);
    const stoppedPod = JSON.parse(stopped.stdout) as { status: string };
    expect(stoppedPod.status).toBe((await apiPod(pod.id)).body.status);
    expect(['EXITED', 'STOPPING']).toContain(stoppedPod.status);

    const started = await runCli(['pods', 'start', pod.id, '--json'], env);
    expect(started.code).toBe(0);
    const startedPod = JSON.parse(started.stdout) as { status: string };
    expect(startedPod.status).toBe((await apiPod(pod.id)).body.status);
    expect(['EXITED', 'STOPPING']).not.toContain(startedPod.status);

    const terminated = await runCli(['pods', 'terminate', pod.id], env);
    expect(terminated.code).toBe(0);
    expect(terminated.stdout.trim()).toBe(`${pod.id} TERMINATED`);
    const after = await apiPod(pod.id);
    expect(after.status === 404 || after.body.status === 'TERMINATED').toBe(true);
  }, 60_000);

  test('table output on a non-terminal: list shows the pod id and name', async () => {
    const name = uniqueName('cli');
    const created = await runCli(['pods', 'create', '--name', name, '--image', 'busybox:1.36', '--gpu', H100], env);
    expect(created.code).toBe(0);
    const id = /^pod (\S+) \(/.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    const list = await runCli(['pods', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id!);
    expect(list.stdout).toContain(name);
  }, 30_000);

  test('a refused request exits 1 and prints the problem detail and its errors', async () => {
    const r = await runCli(['pods', 'create', '--name', uniqueName('cli'), '--image', 'busybox:1.36', '--data', '{"bogus":1}'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const res = await cp.api('/v2/pods', { method: 'POST', key: env.key, json: { name: 'x', image: 'busybox:1.36', bogus: 1 } });
    const problem = (await res.json()) as { detail: string; code: string; errors: string[] };
    expect(res.status).toBe(422);
    expect(r.stderr).toContain(problem.detail);
    expect(problem.errors.length).toBeGreaterThan(0);
    for (const e of problem.errors) expect(r.stderr).toContain(e);
    expect(r.stderr).toContain(`HTTP 422 ${problem.code}`);
  }, 30_000);

  test("another account's pod: get and stop exit 1 with the 404, the pod untouched", async () => {
    const other = await cp.newAccount('read_write');
    const res = await cp.api('/v2/pods', { method: 'POST', key: other.key, json: { name: uniqueName('other'), image: 'busybox:1.36', gpu: { id: H100, count: 1 } } });
    expect(res.status).toBe(201);
    const theirs = (await res.json()) as { id: string; status: string };
    for (const verb of ['get', 'stop']) {
      const r = await runCli(['pods', verb, theirs.id, '--json'], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/HTTP 404/);
    }
    const still = (await (await cp.api(`/v2/pods/${theirs.id}`, { key: other.key })).json()) as { status: string };
    expect(still.status).toBe(theirs.status);
  }, 30_000);

  test('wrong usage exits 2: an unknown command, a missing argument, an option that is not a number', async () => {
    for (const args of [['pods', 'frobnicate'], ['nope'], ['pods', 'get'], ['pods', 'logs', 'x', '--tail', 'many']]) {
      const r = await runCli(args, env);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(/error:/);
    }
    expect((await runCli(['pods', '--help'], env)).code).toBe(0);
  }, 60_000);
});
