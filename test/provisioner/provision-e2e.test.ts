// End to end: real sshd test hosts, the real Docker engine, the control plane with its provisioner.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { dockerInspect, ensureTestImage, FIXTURE_GPUS, fixtureGpuUuid, listContainers, removeContainersByLabel, removeNetworksByLabel, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { volumeHostPath } from '../../model/records/network-volume.ts';
import { waitFor } from '../harness/wait-for.ts';

let cp: TestControlPlane;
let gpuHost: TestHost;
let cpuHost: TestHost;
let image: string;
// exits on SIGTERM (PID 1 ignores it otherwise), so stop and restart do not wait out the 10 s grace
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const hostIds: Record<string, string> = {};


const pod = async (id: string) => (await (await cp.api(`/v2/pods/${id}`)).json()) as Record<string, any>;
const podIn = (id: string, status: string) => waitFor(`pod ${id} ${status}`, async () => ((await pod(id)).status === status ? pod(id) : null));
const host = async (id: string) => (await (await cp.api(`/v2/hosts/${id}`)).json()) as Record<string, any>;

async function enroll(h: TestHost, dataCenterId: string): Promise<string> {
  const res = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:${h.port}`, privateKey: h.privateKey, dataCenterId } });
  const body = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id as string;
}

beforeAll(async () => {
  image = await ensureTestImage();
  gpuHost = await startTestHost({ name: `gpu-${process.pid}`, gpus: [0, 1, 2, 3].map((i) => ({ ...FIXTURE_GPUS.H100_80GB_HBM3, utilizationGpu: 40 + i, utilizationMemory: 10 + i })) });
  cpuHost = await startTestHost({ name: `cpu-${process.pid}` });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, metricsIntervalMs: 500 });
  hostIds.gpu = await enroll(gpuHost, 'dc-e2e');
  hostIds.cpu = await enroll(cpuHost, 'dc-e2e');
});

afterAll(async () => {
  await cp?.close();
  for (const id of Object.values(hostIds)) {
    await removeContainersByLabel(`gpufleet.host=${id}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${id}`).catch(() => undefined);
  }
  await gpuHost?.dispose();
  await cpuHost?.dispose();
});

describe('enrollment', () => {
  test('records the GPU host and the CPU-only host as probed', async () => {
    const g = await host(hostIds.gpu!);
    expect(g.facts.gpus).toHaveLength(4);
    expect(g.facts.gpus[0].typeId).toBe('NVIDIA H100 80GB HBM3');
    expect(g.facts.cudaVersion).toMatch(/^\d+\.\d+$/);
    expect(g.hostKeySha256).toBe(gpuHost.hostKeyFingerprint);
    expect(g.privateKeyEnc).toBeUndefined();
    expect((await host(hostIds.cpu!)).facts.gpus).toHaveLength(0);
    const gpus = (await (await cp.api('/v2/catalog/gpus')).json()) as { gpus: any[] };
    expect(gpus.gpus.map((x) => x.id)).toEqual(['NVIDIA H100 80GB HBM3']);
  });
});

describe('a GPU pod through its lifecycle', () => {
  let id: string;
  test('reaches RUNNING on the GPU host with env, ports and NVIDIA_VISIBLE_DEVICES', async () => {
    const res = await cp.api('/v2/pods', {
      method: 'POST',
      json: { name: 'gpu-e2e', image, args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 }, ports: ['8080/http', '9000/udp'], env: { FOO: 'bar baz' } },
    });
    const created = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(created)).toBe(201);
    id = created.id;
    const running = await podIn(id, 'RUNNING');
    expect(running.machineId).toBe(hostIds.gpu);
    expect(running.runtime.ports).toEqual(
      expect.arrayContaining([expect.objectContaining({ private: 8080, type: 'http', ip: gpuHost.address, public: expect.any(Number) })]),
    );
    const c = await dockerInspect(`gpufleet-${id}`);
    expect(c?.State.Running).toBe(true);
    expect(c?.HostConfig.Runtime).toBe('nvidia');
    const env = c?.Config.Env ?? [];
    expect(env).toContain('FOO=bar baz');
    const visible = env.find((e) => e.startsWith('NVIDIA_VISIBLE_DEVICES='))!.split('=')[1]!.split(',');
    expect(visible).toHaveLength(2);
    const all = [0, 1, 2, 3].map((i) => fixtureGpuUuid(gpuHost.name, i));
    for (const u of visible) expect(all).toContain(u);
    expect(c?.Config.Labels?.['gpufleet.pod']).toBe(id);
    // runtime metrics come from docker stats and the host's nvidia-smi, per GPU of this pod
    const sampled = await waitFor('runtime metrics', async () => {
      const p = await pod(id);
      return p.runtime?.gpus?.some((g: { util: number }) => g.util > 0) ? p : null;
    });
    const byUuid = new Map(all.map((u, i) => [u, { util: 40 + i, memoryUtil: 10 + i }]));
    expect(sampled.runtime.gpus).toEqual(visible.map((u) => byUuid.get(u)));
    expect(sampled.runtime.cpu.util).toEqual(expect.any(Number));
    expect(sampled.runtime.uptime).toEqual(expect.any(Number));
  });

  test('stop stops the container and releases the GPUs; start runs it again', async () => {
    const stopped = (await (await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'stop' } })).json()) as Record<string, any>;
    expect(stopped.status).toBe('EXITED');
    expect(stopped.cost).toBe(0);
    await waitFor('container stopped', async () => (await dockerInspect(`gpufleet-${id}`))?.State.Running === false);
    const started = (await (await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'start' } })).json()) as Record<string, any>;
    expect(started.status).toBe('PROVISIONING');
    await podIn(id, 'RUNNING');
    expect((await dockerInspect(`gpufleet-${id}`))?.State.Running).toBe(true);
  });

  test('restart restarts the container in place', async () => {
    const before = (await dockerInspect(`gpufleet-${id}`))!;
    await new Promise((r) => setTimeout(r, 1100));
    const res = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'restart' } });
    expect(res.status).toBe(200);
    const after = await waitFor('new StartedAt', async () => {
      const c = await dockerInspect(`gpufleet-${id}`);
      return c && c.State.StartedAt !== before.State.StartedAt && c.State.Running ? c : null;
    });
    expect(after.Id).toBe(before.Id);
  });

  test('terminate removes the container', async () => {
    const res = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'terminate' } });
    expect(res.status).toBe(204);
    await waitFor('container removed', async () => (await dockerInspect(`gpufleet-${id}`)) === null);
  });
});

describe('other pods', () => {
  test('a CPU pod runs on the CPU-only host with CPU and memory limits', async () => {
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'cpu-e2e', image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } } });
    const { id } = (await res.json()) as { id: string };
    const p = await podIn(id, 'RUNNING');
    expect(p.machineId).toBe(hostIds.cpu);
    const c = await dockerInspect(`gpufleet-${id}`);
    expect(c?.HostConfig.NanoCpus).toBe(2e9);
    expect(c?.HostConfig.Memory).toBe(1024 ** 3);
    await cp.api(`/v2/pods/${id}`, { method: 'DELETE' });
  });

  test('a network volume of the data center is bind-mounted at the mount path', async () => {
    const vol = await cp.api('/v2/network-volumes', { method: 'POST', json: { name: `vol-${process.pid}`, size: 10, dataCenterId: 'dc-e2e' } });
    const volume = (await vol.json()) as { id: string };
    expect(vol.status, JSON.stringify(volume)).toBe(201);
    const res = await cp.api('/v2/pods', {
      method: 'POST',
      json: { name: 'net-mount', image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 }, mounts: { network: [{ volumeId: volume.id, path: '/data' }] } },
    });
    const { id } = (await res.json()) as { id: string };
    await podIn(id, 'RUNNING');
    const c = await dockerInspect(`gpufleet-${id}`);
    expect(c?.Mounts.find((m) => m.Destination === '/data')?.Source).toBe(volumeHostPath(volume.id));
    await cp.api(`/v2/pods/${id}`, { method: 'DELETE' });
  });

  test('an image that cannot be pulled ends in ERROR with the reason', async () => {
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'bad-image', image: 'registry.invalid/nope:1', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } } });
    const { id } = (await res.json()) as { id: string };
    const p = await podIn(id, 'ERROR');
    expect(p.statusReason).toMatch(/image pull failed/);
    expect(p.actions).toEqual(['start', 'terminate']);
  });

  test('a container that crashes on start ends in ERROR', async () => {
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'crash', image, disk: 1, args: "sh -c 'echo boom; exit 3'", cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } } });
    const { id } = (await res.json()) as { id: string };
    const p = await podIn(id, 'ERROR');
    expect(p.statusReason).toMatch(/exit code 3/);
  });

  test('a labelled container no pod owns is removed', async () => {
    await runDocker(['run', '-d', '--name', `gpufleet-orphan-${process.pid}`, '--label', 'gpufleet.pod=doesnotexist', '--label', `gpufleet.host=${hostIds.cpu}`, image, 'sleep', '3600']);
    await waitFor('orphan removed', async () => (await dockerInspect(`gpufleet-orphan-${process.pid}`)) === null);
  });
});

describe('faults', () => {
  test('a host whose sshd dies goes UNREACHABLE, keeps its pods, and converges to the same container when it returns', async () => {
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'survivor', image, args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
    const { id } = (await res.json()) as { id: string };
    await podIn(id, 'RUNNING');
    const before = (await dockerInspect(`gpufleet-${id}`))!;
    await gpuHost.stop();
    const down = await waitFor('host unreachable', async () => ((await host(hostIds.gpu!)).status === 'UNREACHABLE' ? host(hostIds.gpu!) : null));
    expect(down.statusReason).toMatch(/missed \d+ heartbeats/);
    // conditions say it in our words (docs/fleet.md, docs/pods.md "Conditions"); the SSH error stays in statusReason
    const reachable = down.conditions.find((c: { type: string }) => c.type === 'Reachable');
    expect(reachable).toMatchObject({ status: 'False', reason: 'HeartbeatsMissed' });
    expect(down.conditions.find((c: { type: string }) => c.type === 'Schedulable')).toMatchObject({ status: 'False', reason: 'Unreachable' });
    const p = await pod(id);
    expect(p.status).toBe('RUNNING');
    expect(p.statusReason).toMatch(/unreachable/);
    expect(p.conditions.find((c: { type: string }) => c.type === 'ContainerRunning')).toMatchObject({ status: 'Unknown', reason: 'HostUnreachable' });
    await gpuHost.start();
    await waitFor('host ready', async () => (await host(hostIds.gpu!)).status === 'READY');
    await waitFor('pod reason cleared', async () => (await pod(id)).statusReason === null);
    expect((await pod(id)).conditions.find((c: { type: string }) => c.type === 'ContainerRunning')).toMatchObject({ status: 'True', reason: 'Running' });
    const up = (await host(hostIds.gpu!)).conditions.find((c: { type: string }) => c.type === 'Reachable');
    expect(up).toMatchObject({ status: 'True', reason: 'HeartbeatAnswered' });
    expect(Date.parse(up.lastTransitionTime)).toBeGreaterThan(Date.parse(reachable.lastTransitionTime));
    // a few more passes over the returned host: nothing was recreated (or restarted) meanwhile
    await new Promise((r) => setTimeout(r, 1500));
    const after = await listContainers(`gpufleet.pod=${id}`);
    expect(after.map((c) => c.Id)).toEqual([before.Id]);
    expect(after[0]!.State.StartedAt).toBe(before.State.StartedAt);
    expect((await pod(id)).status).toBe('RUNNING');
    await cp.api(`/v2/pods/${id}`, { method: 'DELETE' });
  });

  test('a changed host key is refused until an admin accepts it', async () => {
    const old = gpuHost.hostKeyFingerprint;
    await gpuHost.rotateHostKey();
    await cp.services.sshPool.close(hostIds.gpu!);
    const refused = await waitFor('key mismatch', async () => {
      const h = await host(hostIds.gpu!);
      return h.rejectedHostKeySha256 ? h : null;
    });
    expect(refused.status).toBe('UNREACHABLE');
    expect(refused.hostKeySha256).toBe(old);
    expect(refused.rejectedHostKeySha256).toBe(gpuHost.hostKeyFingerprint);
    expect(refused.statusReason).toMatch(/host key/);
    const accepted = (await (await cp.api(`/v2/hosts/${hostIds.gpu}/accept-host-key`, { method: 'POST', json: {} })).json()) as Record<string, any>;
    expect(accepted.hostKeySha256).toBe(gpuHost.hostKeyFingerprint);
    await waitFor('host ready', async () => (await host(hostIds.gpu!)).status === 'READY');
  });
});
