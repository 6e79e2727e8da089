// Returning a failed GPU to service, and never placing on it before (docs/gpu-health.md), on a real
// sshd test host with fixture nvidia-smi, dmesg and dcgmi and the provisioner's watcher: a GPU in
// FAILURE takes no pod (the other GPU does; a second pod is refused); `dcgmi diag` fails (the GPU stays
// out, the failure recorded) then passes (HEALTHY, incidents resolved, a pod lands on it); without
// DCGM the driver check fails on a pending row remap and passes once it is gone; an operator's clear
// is recorded with the key that made it; bad input is refused and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { runCli } from '../../cli/run-cli.ts';
import { provisioner } from '../../../provisioner/index.ts';

type Json = Record<string, any>;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let image = '';
let gpu0 = '';
let gpu1 = '';

const view = async () => (await (await cp.api(`/v2/hosts/${hostId}`)).json()) as Json;
const gpu = async (i: number) => (await view()).facts.gpus[i] as Json;
const diagnose = async (json: Json) => {
  const r = await cp.api(`/v2/hosts/${hostId}/diagnose`, { method: 'POST', json });
  return { status: r.status, body: (await r.json()) as Json };
};
const gpuEvents = async () => ((await (await cp.api(`/v2/events?resourceId=${hostId}`)).json()) as { events: Json[] }).events.filter((e) => e.type.startsWith('host.gpu_'));

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `gpureturn-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3], kernelLog: 'dmesg' });
  await host.gpu!.dcgmi('fail');
  cp = await startTestControlPlane({ background: [provisioner({ networkLingerMs: 0 })], reconcileIntervalMs: 500, config: { gpuPollSeconds: 1, gpuSmiTimeoutSeconds: 30 } });
  hostId = await enrolTestHost(cp, host);
  await waitFor('the watcher polled', async () => (await view()).facts.gpus.every((g: Json) => g.busId), 30_000, 100);
  [gpu0, gpu1] = (await view()).facts.gpus.map((g: Json) => g.uuid as string);
  await host.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 48, pid=99, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.');
  await waitFor('GPU 0 in FAILURE', async () => (await gpu(0)).health === 'FAILURE', 10_000, 100);
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
});

async function createPod(name: string): Promise<{ status: number; body: Json }> {
  const r = await cp.api('/v2/pods', { method: 'POST', json: { name, image, args: 'sleep 3600', disk: 1, gpu: { id: FIXTURE_GPUS.H100_80GB_HBM3.name, count: 1 } } });
  return { status: r.status, body: (await r.json()) as Json };
}

describe('a GPU in FAILURE', () => {
  test('is never placed on: a pod takes the healthy GPU, the next one is refused, and after a release still not GPU 0', async () => {
    const a = await createPod('on-healthy');
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect((await cp.services.store.get('pods', a.body.id))?.gpuUuids).toEqual([gpu1]);
    const b = await createPod('nowhere');
    expect(b.status, JSON.stringify(b.body)).toBe(400);
    expect(b.body.code).toBe('CAPACITY_UNAVAILABLE');
    await cp.api(`/v2/pods/${a.body.id}`, { method: 'DELETE' });
    const c = await createPod('still-not-gpu0');
    expect(c.status).toBe(201);
    expect((await cp.services.store.get('pods', c.body.id))?.gpuUuids).toEqual([gpu1]);
    await cp.api(`/v2/pods/${c.body.id}`, { method: 'DELETE' });
  });

  test('diagnose: dcgmi fails, the GPU stays out with the failure recorded; then it passes and the GPU returns', async () => {
    const failed = await diagnose({ gpu: gpu0 });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body).toMatchObject({ method: 'dcgmi', level: 1, passed: false, gpus: [{ index: 0, uuid: gpu0, passed: false, health: 'FAILURE' }] });
    expect(failed.body.gpus[0].summary).toContain('GPU Memory');
    expect(await host.gpu!.dcgmiCalls()).toEqual(['diag -r 1 -i 0 -j']);
    const g = await gpu(0);
    expect(g).toMatchObject({ health: 'FAILURE', diagnostic: { passed: false, method: 'dcgmi', level: 1, by: expect.stringMatching(/^user:/) } });
    expect(g.incidents.map((i: Json) => [i.xid ?? i.counter, i.resolvedAt])).toEqual([[48, null], ['diagnostic.failed', null]]);

    await host.gpu!.dcgmi('pass');
    const passed = await diagnose({ gpu: gpu0, level: 2 });
    expect(passed.body).toMatchObject({ method: 'dcgmi', level: 2, passed: true, gpus: [{ uuid: gpu0, passed: true, health: 'HEALTHY' }] });
    expect((await host.gpu!.dcgmiCalls()).at(-1)).toBe('diag -r 2 -i 0 -j');
    const back = await gpu(0);
    expect(back.health).toBe('HEALTHY');
    expect(back.incidents.every((i: Json) => i.resolvedAt !== null)).toBe(true);
    expect((await view()).conditions.find((c: Json) => c.type === 'GpusHealthy')).toMatchObject({ status: 'True', reason: 'AllGpusHealthy' });
    const events = await gpuEvents();
    expect(events.map((e) => e.type)).toEqual(['host.gpu_failure', 'host.gpu_diagnosed', 'host.gpu_incident', 'host.gpu_diagnosed', 'host.gpu_healthy']);
    expect(events[2]).toMatchObject({ status: 'FAILURE', reason: expect.stringContaining('diagnostic.failed (DIAGNOSTIC_FAILED)') });
    expect(events.at(-1)).toMatchObject({ status: 'HEALTHY', previousStatus: 'FAILURE', actor: expect.stringMatching(/^user:/) });
    // and it takes pods again
    const p = await createPod('back-on-gpu0');
    expect(p.status).toBe(201);
    await cp.api(`/v2/pods/${p.body.id}`, { method: 'DELETE' });
  });

  test('without DCGM, the driver check: a pending row remap fails it; once gone it passes', async () => {
    await host.gpu!.dcgmi(null);
    await host.gpu!.setGpuField(1, 'remapped_rows.pending', 'Yes');
    await waitFor('GPU 1 in WARNING', async () => (await gpu(1)).health === 'WARNING', 10_000, 100);
    const failed = await diagnose({ gpu: gpu1 });
    expect(failed.body).toMatchObject({ method: 'driver-check', level: 0, passed: false, gpus: [{ uuid: gpu1, passed: false, summary: 'a row remap is pending (a GPU reset applies it)', health: 'FAILURE' }] });
    await host.gpu!.setGpuField(1, 'remapped_rows.pending', null);
    const passed = await diagnose({});
    expect(passed.body).toMatchObject({ method: 'driver-check', passed: true });
    expect(passed.body.gpus.map((g: Json) => [g.uuid, g.passed, g.health])).toEqual([[gpu0, true, 'HEALTHY'], [gpu1, true, 'HEALTHY']]);
    expect(passed.body.gpus[1].summary).toMatch(/^listed by the driver; uncorrected ECC counts stable \(0\/0\) over 2 s; nothing pending$/);
  });

  test('the CLI shows the host, diagnoses and clears by hand (recorded with the key)', async () => {
    await host.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 79, pid=5, GPU has fallen off the bus.');
    await waitFor('GPU 1 in FAILURE', async () => (await gpu(1)).health === 'FAILURE', 10_000, 100);
    const env = { url: cp.url, key: cp.adminKey };
    const show = await runCli(['hosts', 'show', hostId], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('FAILURE');
    expect(show.stdout).toContain('Xid 79 GPU_HAS_FALLEN_OFF_THE_BUS → RESTART_BM ×1');
    expect(show.stdout).toContain('GpusHealthy=False GpuFailure');
    const diag = await runCli(['hosts', 'diagnose', hostId, '--gpu', gpu1], env);
    expect(diag.stdout).toContain(`GPU 1 ${gpu1}: passed, now HEALTHY`);
    await host.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 79, pid=6, GPU has fallen off the bus.');
    await waitFor('GPU 1 in FAILURE again', async () => (await gpu(1)).health === 'FAILURE', 10_000, 100);
    const clear = await runCli(['hosts', 'clear-gpu', hostId, '--gpu', gpu1, '--reason', 'reseated the card'], env);
    expect(clear.code, clear.stderr).toBe(0);
    expect(await gpu(1)).toMatchObject({ health: 'HEALTHY', diagnostic: { method: 'cleared', passed: true, summary: 'cleared by hand: reseated the card', by: expect.stringMatching(/^user:/) } });
    expect((await gpuEvents()).at(-1)).toMatchObject({ type: 'host.gpu_healthy', actor: expect.stringMatching(/^user:/) });
  });

  test('bad input is refused and changes nothing; a tenant key cannot diagnose', async () => {
    const before = await view();
    expect((await diagnose({ level: 3 })).status).toBe(422);
    expect((await diagnose({ gpu: 'GPU-0000; reboot' })).status).toBe(422);
    expect((await diagnose({ gpu: '--help' })).status).toBe(422);
    expect((await diagnose({ gpu: 'GPU-00000000-0000-0000-0000-000000000000' })).status).toBe(404);
    expect((await cp.api(`/v2/hosts/${hostId}/gpus/${encodeURIComponent('GPU-x;id')}/clear`, { method: 'POST', json: {} })).status).toBe(404);
    const { key } = await cp.newAccount('read_write', 10);
    expect((await cp.api(`/v2/hosts/${hostId}/diagnose`, { method: 'POST', key, json: {} })).status).toBe(403);
    const after = await view();
    expect(after.facts.gpus.map((g: Json) => [g.health, g.diagnostic])).toEqual(before.facts.gpus.map((g: Json) => [g.health, g.diagnostic]));
  });
});
