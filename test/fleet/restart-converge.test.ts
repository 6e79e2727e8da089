// A control plane killed mid-provision (SIGKILL) restarts, rebuilds observed state from the host,
// creates no duplicate container, and a persistent mount's directory survives stop but not terminate.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { dockerInspect, ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, removeNetworksByLabel, startTestHost, type TestHost } from '../harness/index.ts';

let h: TestHost;
let dataDir: string;
let cp: SpawnedControlPlane | null = null;
let hostId = '';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const storageRoot = path.join(os.tmpdir(), `gpufleet-pods-${process.pid}`);

async function api(p: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(cp!.url + p, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${cp!.adminKey}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, any>) };
}

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
  h = await startTestHost({ name: `restart-${process.pid}`, gpus: [FIXTURE_GPUS.RTX_4090, FIXTURE_GPUS.RTX_4090] });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-restart-'));
  await spawn();
  const res = await api('/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:${h.port}`, privateKey: h.privateKey } });
  expect(res.status).toBe(201);
  hostId = res.body!.id;
});

afterAll(async () => {
  await cp?.kill('SIGTERM');
  await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  await h?.dispose();
  await rm(dataDir, { recursive: true, force: true });
  await rm(storageRoot, { recursive: true, force: true });
});

test('SIGKILL mid-provision converges to one container per pod after restart', async () => {
  const created = await Promise.all(
    [1, 2].map((i) => api('/v2/pods', { method: 'POST', json: { name: `k${i}`, image: 'gpufleet-test/busybox:latest', args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA GeForce RTX 4090' } } })),
  );
  for (const c of created) expect(c.status).toBe(201);
  await cp!.kill('SIGKILL'); // while the provisioner is pulling/creating
  await spawn();
  for (const c of created) await waitFor(`pod ${c.body!.id} RUNNING`, async () => (await api(`/v2/pods/${c.body!.id}`)).body!.status === 'RUNNING');
  for (const c of created) expect(await listContainers(`gpufleet.pod=${c.body!.id}`)).toHaveLength(1);
  // and another restart adopts the running containers instead of making new ones
  const ids = (await listContainers(`gpufleet.host=${hostId}`)).map((c) => c.Id).sort();
  await cp!.kill('SIGKILL');
  await spawn();
  await new Promise((r) => setTimeout(r, 1500));
  expect((await listContainers(`gpufleet.host=${hostId}`)).map((c) => c.Id).sort()).toEqual(ids);
  for (const c of created) await api(`/v2/pods/${c.body!.id}`, { method: 'DELETE' });
  await waitFor('containers removed', async () => (await listContainers(`gpufleet.host=${hostId}`)).length === 0);
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
