// A control plane killed (SIGKILL) while `docker run` is in flight on the host restarts, rebuilds
// observed state from the host and ends with exactly one running container per pod; a persistent
// mount's directory survives stop but not terminate. The test host's docker wrapper
// (testing/docker-run-gate.ts) holds `docker run` so the kill lands while it is in flight.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, spawnedAdminApi, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, FIXTURE_GPUS, listContainers, startTestHost, type TestHost } from '../harness/index.ts';

let h: TestHost;
let dataDir: string;
let cp: SpawnedControlPlane | null = null;
let hostId = '';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const storageRoot = path.join(os.tmpdir(), `gpufleet-pods-${process.pid}`);

const api = spawnedAdminApi(() => cp);

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const spawn = async () =>
  (cp = await spawnControlPlane({ dataDir, port: await freePort(), env: { GPUFLEET_RECONCILE_INTERVAL_MS: '300', GPUFLEET_POD_STORAGE_ROOT: storageRoot } }));

beforeAll(async () => {
  await ensureTestImage();
  h = await startTestHost({ name: `restart-${process.pid}`, gpus: [FIXTURE_GPUS.RTX_4090, FIXTURE_GPUS.RTX_4090], dockerRunGate: true });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-restart-'));
  await spawn();
  hostId = await enrolTestHost(cp!, h);
});

afterAll(async () => {
  // a run still held (a failed test) fails now instead of keeping the plane's pass waiting
  await h?.dockerRunGate?.abort();
  await disposeHostWorld({ cp, host: h, hostId });
  await rm(dataDir, { recursive: true, force: true });
  await rm(storageRoot, { recursive: true, force: true });
});

/**
 * Creates a pod with `docker run` held on the host, SIGKILLs the control plane while that run is in
 * flight, starts the plane again and lets the held run go: before the restart (the plane comes back
 * to the container the killed plane's run made), or only once the restarted plane has issued its own
 * run for the same pod (the two race for it). Answers the pod id once it is RUNNING, and the id of
 * the container the killed plane's run made before the restart, if any.
 * (One pod: a host's pass creates its pods one after another, so only one run is ever in flight.)
 */
async function killDuringDockerRun(release: 'before restart' | 'after the restarted plane runs too'): Promise<{ id: string; orphan: string | null }> {
  const gate = h.dockerRunGate!;
  await gate.hold();
  const created = await api('/v2/pods', { method: 'POST', json: { name: 'k', image: 'gpufleet-test/busybox:latest', args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA GeForce RTX 4090' } } });
  expect(created.status).toBe(201);
  const id = created.body!.id as string;
  // the kill lands while the pod's `docker run` has reached the host and not finished: held, not
  // released, and no container of the pod in the engine yet
  expect(await gate.waitHeld(1)).toEqual([expect.stringContaining(id)]);
  expect(gate.holding).toBe(true);
  expect(await listContainers(`gpufleet.pod=${id}`)).toEqual([]);
  await cp!.kill('SIGKILL');
  let orphan: string | null = null;
  if (release === 'before restart') {
    await gate.release();
    // the held command outlives the plane that sent it
    await waitFor("the killed plane's run to make its container", async () => (await listContainers(`gpufleet.pod=${id}`)).length > 0);
    orphan = (await listContainers(`gpufleet.pod=${id}`))[0]!.Id;
    await spawn();
  } else {
    await spawn();
    // the restarted plane saw no container and ran its own: two runs for the pod wait on the host
    expect(await gate.waitHeld(2)).toEqual([expect.stringContaining(id), expect.stringContaining(id)]);
    await gate.release();
  }
  await waitFor(`pod ${id} RUNNING`, async () => (await api(`/v2/pods/${id}`)).body!.status === 'RUNNING');
  return { id, orphan };
}

/** exactly one container in the engine carries the pod's label, and it runs */
async function expectOneRunningContainer(id: string): Promise<void> {
  const cs = await listContainers(`gpufleet.pod=${id}`);
  expect(cs.length, `containers of pod ${id}: ${cs.map((c) => c.Name).join(', ')}`).toBe(1);
  expect(cs[0]!.State.Running).toBe(true);
}

async function terminate(id: string): Promise<void> {
  await api(`/v2/pods/${id}`, { method: 'DELETE' });
  await waitFor('containers removed', async () => (await listContainers(`gpufleet.host=${hostId}`)).length === 0);
}

test("SIGKILL during docker run, released before the restart: exactly one running container for the pod, the killed plane's, kept by a later restart", async () => {
  const { id, orphan } = await killDuringDockerRun('before restart');
  await expectOneRunningContainer(id);
  expect((await listContainers(`gpufleet.pod=${id}`))[0]!.Id).toBe(orphan);
  // and another restart adopts the running container instead of making a new one
  const containerIds = (await listContainers(`gpufleet.host=${hostId}`)).map((c) => c.Id);
  await cp!.kill('SIGKILL');
  await spawn();
  await new Promise((r) => setTimeout(r, 1500));
  expect((await listContainers(`gpufleet.host=${hostId}`)).map((c) => c.Id)).toEqual(containerIds);
  await terminate(id);
});

test('SIGKILL during docker run, released after the restarted control plane ran its own: exactly one running container for the pod', async () => {
  const { id } = await killDuringDockerRun('after the restarted plane runs too');
  await expectOneRunningContainer(id);
  await terminate(id);
});

test('a persistent mount is kept across stop and removed at terminate', async () => {
  const res = await api('/v2/pods', {
    method: 'POST',
    json: { name: 'persist', image: 'gpufleet-test/busybox:latest', args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA GeForce RTX 4090' }, mounts: { persistent: { size: 10, path: '/workspace' } } },
  });
  expect(res.status).toBe(201);
  const id = res.body!.id as string;
  await waitFor('RUNNING', async () => (await api(`/v2/pods/${id}`)).body!.status === 'RUNNING');
  const dir = path.join(storageRoot, id);
  const c = await dockerInspect(`gpufleet-${id}`);
  expect(c?.Mounts.find((m) => m.Destination === '/workspace')?.Source).toBe(dir);
  expect(existsSync(dir)).toBe(true);
  await api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'stop' } });
  await waitFor('stopped', async () => (await dockerInspect(`gpufleet-${id}`))?.State.Running === false);
  expect(existsSync(dir)).toBe(true);
  const started = await api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'start' } });
  expect(started.body!.machineId).toBe(hostId); // pinned to the host holding its storage
  await waitFor('RUNNING again', async () => (await api(`/v2/pods/${id}`)).body!.status === 'RUNNING');
  expect((await api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'terminate' } })).status).toBe(204);
  await waitFor('container and storage removed', async () => (await dockerInspect(`gpufleet-${id}`)) === null && !existsSync(dir));
});
