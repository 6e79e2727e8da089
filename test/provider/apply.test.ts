// plan/apply/destroy end to end against a listening control plane (fake hosts, no provisioner, so
// pods stay PROVISIONING and applies run with wait off unless a test is about waiting).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ApiError, type ApiClient } from '../../client/api-client.ts';
import { hasChanges } from '../../provider/engine/plan.ts';
import { formatPlan } from '../../provider/engine/plan-format.ts';
import { makePlan, RefusedError, runApply, runDestroy } from '../../provider/engine/run.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { GpufleetStack, Pod, RegistryRef } from '../../provider/index.ts';
import { apiFor, engineOptions, GPU, listPods, startFleet, synthStack, testStack } from './helpers.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startFleet();
});
afterAll(async () => cp?.close());

const byName = async (api: ApiClient) => new Map((await listPods(api)).map((p) => [p.name, p]));

test('apply creates the stack in dependency order, tagged, and a second plan has nothing to do', async () => {
  const api = await apiFor(cp);
  const stack = await testStack('s1');
  const first = await runApply(stack, engineOptions(api));
  expect(first.plan.summary).toEqual({ add: 5, change: 0, destroy: 0 });
  expect(first.applied?.ok).toBe(true);

  const pods = await byName(api);
  const vol = (await api.get<{ networkVolumes: { id: string; tags: Record<string, string> }[] }>('/v2/network-volumes')).networkVolumes[0]!;
  expect(pods.get('trainer')?.mounts.network?.[0]?.volumeId).toBe(vol.id);
  expect(vol.tags).toEqual({ 'gpufleet:stack': 's1', 'gpufleet:path': 'data' });
  expect(pods.get('cpu')?.tags).toEqual({ 'gpufleet:stack': 's1', 'gpufleet:path': 'cpu' });
  const [ep] = await api.get<{ templateId: string }[]>('/v1/endpoints');
  expect(ep?.templateId).toBe(first.applied?.ids.worker);

  const again = await makePlan(stack, api);
  expect(hasChanges(again)).toBe(false);
  expect(formatPlan(again)).toBe('No changes. The fleet matches stack "s1".\n');
  const second = await runApply(stack, engineOptions(api));
  expect(second.applied).toBeNull();
});

test('changed fields the API can PATCH are updated in place; the others replace the resource', async () => {
  const api = await apiFor(cp);
  await runApply(await testStack('s2'), engineOptions(api));
  const before = await byName(api);

  const edited = await testStack('s2', { image: 'trainer:2', mountPath: '/mnt/data', workersMax: 4, env: { STAGE: 'prod' } });
  const plan = await makePlan(edited, api);
  const trainer = plan.changes.find((c) => c.path === 'trainer')!;
  expect(trainer.action).toBe('update');
  expect(trainer.changes.map((c) => c.field).sort()).toEqual(['env', 'image', 'mounts.network[0].path']);
  expect(plan.changes.find((c) => c.path === 'ep')).toMatchObject({ action: 'update', changes: [{ field: 'workersMax', from: 2, to: 4 }] });
  expect(plan.summary).toEqual({ add: 0, change: 2, destroy: 0 });
  expect(formatPlan(plan)).toContain('  ~ pod.trainer [id=');
  expect(formatPlan(plan)).toMatch(/~ image += "trainer:1" -> "trainer:2"/);
  await runApply(edited, engineOptions(api));
  const updated = (await byName(api)).get('trainer')!;
  expect(updated.id).toBe(before.get('trainer')!.id);
  expect(updated).toMatchObject({ image: 'trainer:2', env: { STAGE: 'prod' }, mounts: { network: [{ path: '/mnt/data' }] } });
  expect(hasChanges(await makePlan(edited, api))).toBe(false);

  const reshaped = await testStack('s2', { image: 'trainer:2', mountPath: '/mnt/data', workersMax: 4, env: { STAGE: 'prod' }, gpuCount: 2, cpuFlavor: 'cpu3g' });
  const plan2 = await makePlan(reshaped, api);
  // a GPU count is a resize in place (the pod keeps its id); a CPU flavor forces a replacement
  expect(plan2.changes.find((c) => c.path === 'trainer')).toMatchObject({ action: 'update', forcedBy: [], changes: [{ field: 'gpu.count', from: 1, to: 2 }] });
  expect(plan2.changes.find((c) => c.path === 'cpu')).toMatchObject({ action: 'replace', forcedBy: ['cpu.id'] });
  expect(formatPlan(plan2)).toContain('  ~ pod.trainer');
  expect(formatPlan(plan2)).toMatch(/~ gpu\.count = 1 -> 2\n {6}# placement: would run on host \S+ \(dc-test-1\)/);
  expect(formatPlan(plan2)).toContain('must be replaced (forced by cpu.id)');
  expect(plan2.summary).toEqual({ add: 1, change: 1, destroy: 1 });
  await runApply(reshaped, engineOptions(api));
  const after = await byName(api);
  expect(after.get('trainer')!.id).toBe(before.get('trainer')!.id);
  expect(after.get('trainer')!.gpu).toEqual({ id: 'NVIDIA H100 80GB HBM3', count: 2 });
  expect(after.get('cpu')!.id).not.toBe(before.get('cpu')!.id);
  const old = await api.get<{ status: string }>(`/v2/pods/${before.get('cpu')!.id}`);
  expect(old.status).toBe('TERMINATED');
  expect(hasChanges(await makePlan(reshaped, api))).toBe(false);
});

test('replacing a network volume loses data: refused under --auto-approve alone, done with --allow-data-loss', async () => {
  const api = await apiFor(cp);
  await runApply(await testStack('s3', { volumeSize: 100, endpointOnVolume: true }), engineOptions(api));
  const shrunk = await testStack('s3', { volumeSize: 60, endpointOnVolume: true });
  const plan = await makePlan(shrunk, api);
  expect(plan.changes.find((c) => c.path === 'data')).toMatchObject({ action: 'replace', forcedBy: ['size'], dataLoss: true });
  // the pod's volumeId is unknown until the new volume exists, and volumeId is immutable
  expect(plan.changes.find((c) => c.path === 'trainer')).toMatchObject({ action: 'replace', forcedBy: ['mounts.network[0].volumeId'] });
  // an endpoint can be repointed in place: the old volume is deleted only after it moved over
  expect(plan.changes.find((c) => c.path === 'ep')).toMatchObject({ action: 'update', changes: [{ field: 'networkVolumeId', to: '(known after apply)' }] });

  await expect(runApply(shrunk, engineOptions(api))).rejects.toThrow(RefusedError);
  expect((await api.get<{ networkVolumes: { size: number }[] }>('/v2/network-volumes')).networkVolumes.map((v) => v.size)).toEqual([100]);

  const questions: string[] = [];
  const declined = engineOptions(api, { autoApprove: false, confirm: async (q) => (questions.push(q), false) });
  await expect(runApply(shrunk, declined)).rejects.toThrow('Apply cancelled.');
  expect(questions[0]).toContain('Warning: the data of these resources will be lost:\n  - network-volume.data [id=');

  const done = await runApply(shrunk, engineOptions(api, { allowDataLoss: true }));
  expect(done.applied?.ok).toBe(true);
  const vols = (await api.get<{ networkVolumes: { id: string; size: number }[] }>('/v2/network-volumes')).networkVolumes;
  expect(vols.map((v) => v.size)).toEqual([60]);
  expect((await byName(api)).get('trainer')!.mounts.network?.[0]?.volumeId).toBe(vols[0]!.id);
  expect((await api.get<{ networkVolumeId: string }[]>('/v1/endpoints'))[0]?.networkVolumeId).toBe(vols[0]!.id);
  expect(hasChanges(await makePlan(shrunk, api))).toBe(false);
});

test('a declaration removed from the stack is destroyed; destroy removes only what the stack owns', async () => {
  const api = await apiFor(cp);
  await runApply(await testStack('s4'), engineOptions(api));
  const bystander = await api.post<{ id: string }>('/v2/pods', { name: 'bystander', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3' } });

  const smaller = await testStack('s4', { withoutCpuPod: true });
  const plan = await makePlan(smaller, api);
  expect(plan.changes.filter((c) => c.action !== 'no-op')).toMatchObject([{ path: 'cpu', action: 'delete', dataLoss: false }]);
  await runApply(smaller, engineOptions(api));
  expect([...(await byName(api)).keys()].sort()).toEqual(['bystander', 'trainer']);

  const destroyed = await runDestroy(smaller, engineOptions(api));
  expect(destroyed.plan.summary).toEqual({ add: 0, change: 0, destroy: 4 });
  expect(destroyed.applied?.ok).toBe(true);
  expect([...(await byName(api)).keys()]).toEqual(['bystander']);
  expect((await api.get<{ networkVolumes: unknown[] }>('/v2/network-volumes')).networkVolumes).toEqual([]);
  expect(await api.get<unknown[]>('/v1/endpoints')).toEqual([]);
  expect((await api.get<{ id: string }>(`/v2/pods/${bystander.id}`)).id).toBe(bystander.id);
});

test('apply waits for pods to be RUNNING and, on timeout, says what each is waiting for', async () => {
  const api = await apiFor(cp);
  const opts = engineOptions(api, { wait: true, waitTimeoutMs: 400, pollMs: 50 });
  const r = await runApply(await testStack('s5'), opts);
  expect(r.applied?.ok).toBe(false);
  expect(r.applied?.notRunning.map((p) => p.name).sort()).toEqual(['cpu', 'trainer']);
  expect(r.applied?.notRunning[0]).toMatchObject({ status: 'PROVISIONING', statusReason: expect.stringContaining('waiting for the provisioner') });
  expect(opts.lines.join('\n')).toMatch(/✖ 2 of 2 pod\(s\) not RUNNING after \d+s/);
  expect(opts.output.join('')).toMatch(/pod trainer \[id=\w+\] is PROVISIONING \(placed on host/);
});

test('an API refusal during apply is reported per resource, and dependents are skipped', async () => {
  const api = await apiFor(cp);
  const stack = await testStack('s6');
  // a data center without hosts: the API refuses the volume, so the pod mounting it cannot be created
  const vol = stack.resources.find((r) => r.path === 'data')!;
  vol.spec = { ...vol.spec, dataCenterId: 'dc-nowhere' };
  const r = await runApply(stack, engineOptions(api));
  expect(r.applied?.ok).toBe(false);
  expect(r.applied?.errors.join('\n')).toContain('network-volume.data: The network volume failed validation: $.dataCenterId: unknown data center "dc-nowhere"');
  expect(r.applied?.errors.join('\n')).toContain('pod.trainer: skipped, it depends on null_resource.data');
  expect([...(await byName(api)).keys()]).toEqual(['cpu']);
  await expect(api.get('/v2/pods/nope')).rejects.toBeInstanceOf(ApiError);
});

test('a RegistryRef is looked up by name, never created: pods get its id, a missing one stops the plan', async () => {
  const api = await apiFor(cp);
  const build = (s: GpufleetStack) => {
    const creds = new RegistryRef(s, 'ghcr', { name: 'ghcr-readonly' });
    new Pod(s, 'private', { name: 'private', image: 'ghcr.io/acme/secret:1', registry: creds.id, gpu: { id: GPU } });
  };
  const stack = await synthStack('r1', build);
  await expect(makePlan(stack, api)).rejects.toThrow('ghcr: no registry credential named "ghcr-readonly" exists');
  const reg = await api.post<{ id: string }>('/v2/registries', { name: 'ghcr-readonly', username: 'bot', password: 's3cret' });
  const r = await runApply(stack, engineOptions(api));
  expect(r.plan.summary).toEqual({ add: 1, change: 0, destroy: 0 });
  expect((await byName(api)).get('private')).toMatchObject({ registry: reg.id });
  expect(hasChanges(await makePlan(stack, api))).toBe(false);
});
