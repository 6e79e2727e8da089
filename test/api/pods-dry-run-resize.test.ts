// POST /v2/pods?dryRun=true (the house's plan, nothing written) and PATCH of gpu.count (a resize in
// place, planned with the pod's own GPUs counted free, in one commit): the answers, and that a refusal
// leaves everything exactly as it was. Record-only hosts of 2 GPUs each: no provisioner.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startTestControlPlane } from '../harness/control-plane.ts';
import { call, cpuBody, createPod, expectProblem, gpuBody, snapshotPods, uniqueName } from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
const DC = 'dc-resize';

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'rs-a', gpus: 2, dataCenterId: DC },
    { id: 'rs-b', gpus: 2, dataCenterId: DC },
    { id: 'rs-cpu', gpus: 0, dataCenterId: DC, cpuCount: 1000, memoryGb: 10000 },
  ]);
  user = await cp.newAccount('read_write');
});
afterAll(async () => cp?.close());

const dryRun = (json: unknown, query = '') => call(cp, `/v2/pods?dryRun=true${query}`, { method: 'POST', json, key: user.key });
const patch = (id: string, json: unknown) => call(cp, `/v2/pods/${id}`, { method: 'PATCH', json, key: user.key });
const get = async (id: string) => (await call(cp, `/v2/pods/${id}`, { key: user.key })).body;
const body = (count: number, extra: Record<string, unknown> = {}) => gpuBody({ gpu: { id: 'NVIDIA H100 80GB HBM3', count }, dataCenterIds: [DC], ...extra });
const terminateAll = async () => {
  for (const p of (await call(cp, '/v2/pods', { key: user.key })).body.pods) await call(cp, `/v2/pods/${p.id}`, { method: 'DELETE', key: user.key });
};

describe('POST /v2/pods?dryRun=true', () => {
  test('answers 200 with the host it would take and what it would cost, and creates nothing', async () => {
    const before = await snapshotPods(cp, user.key);
    const a = await dryRun(body(2));
    expect(a.status, a.text).toBe(200);
    expect(a.body).toMatchObject({ dryRun: true, dataCenterId: DC, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 }, cloud: 'SECURE', replaces: null });
    expect(['rs-a', 'rs-b']).toContain(a.body.machineId);
    expect(a.body.costPerHr).toBeGreaterThan(0);
    expect(await snapshotPods(cp, user.key)).toBe(before);
    // nothing was held either: two real 2-GPU creates still fit
    const one = await createPod(cp, body(2), user.key);
    const two = await createPod(cp, body(2), user.key);
    expect(new Set([one.body.machineId, two.body.machineId]).size).toBe(2);
    await terminateAll();
  });

  test('a refusal is the problem+json a real create gets, and nothing changes', async () => {
    const impossible = body(3);
    const dry = await dryRun(impossible);
    expectProblem(dry, 400, { code: 'PLACEMENT_IMPOSSIBLE' });
    const real = await call(cp, '/v2/pods', { method: 'POST', json: impossible, key: user.key });
    expect({ status: real.status, code: real.body.code, detail: real.body.detail }).toEqual({ status: dry.status, code: dry.body.code, detail: dry.body.detail });

    await createPod(cp, body(2), user.key);
    await createPod(cp, body(2), user.key);
    const before = await snapshotPods(cp, user.key);
    const full = await dryRun(body(1));
    expectProblem(full, 400, { code: 'CAPACITY_UNAVAILABLE' });
    const realFull = await call(cp, '/v2/pods', { method: 'POST', json: body(1), key: user.key });
    expect(realFull.body.code).toBe('CAPACITY_UNAVAILABLE');
    expect(await snapshotPods(cp, user.key)).toBe(before);
    await terminateAll();
  });

  test('replaces: the named pod’s GPUs and name count as free; an unknown one is 404; only with dryRun', async () => {
    const name = uniqueName('replaced');
    const old = await createPod(cp, body(2, { name }), user.key);
    await createPod(cp, body(2), user.key);
    // the same name and all the GPUs taken: a create would be refused twice over
    expect((await dryRun(body(2, { name }))).body.code).toBe('CONFLICT');
    const freed = await dryRun(body(2, { name }), `&replaces=${old.body.id}`);
    expect(freed.status, freed.text).toBe(200);
    expect(freed.body).toMatchObject({ machineId: old.body.machineId, replaces: old.body.id });
    expectProblem(await dryRun(body(1), '&replaces=nosuchpod'), 404, { code: 'NOT_FOUND' });
    const stray = await call(cp, `/v2/pods?replaces=${old.body.id}`, { method: 'POST', json: body(1), key: user.key });
    expectProblem(stray, 422, { code: 'VALIDATION_FAILED', errorMatching: '$.replaces' });
    // another account's pod is not found either
    const other = await cp.newAccount('read_write');
    const theirs = await call(cp, `/v2/pods?dryRun=true&replaces=${old.body.id}`, { method: 'POST', json: body(1), key: other.key });
    expectProblem(theirs, 404, { code: 'NOT_FOUND' });
    await terminateAll();
  });
});

describe('PATCH gpu.count: a resize in place', () => {
  test('1 → 2 on its own host when that has room: same id, two GPUs, the reason says so, billed for two', async () => {
    const pod = await createPod(cp, body(1), user.key);
    const c = await patch(pod.body.id, { gpu: { count: 2 } });
    expect(c.status, c.text).toBe(200);
    expect(c.body).toMatchObject({ id: pod.body.id, machineId: pod.body.machineId, gpu: { count: 2 }, status: 'PROVISIONING' });
    expect(c.body.statusReason).toMatch(/^resizing to 2 GPU\(s\): recreating the container on host rs-/);
    expect(c.body.conditions).toContainEqual(expect.objectContaining({ type: 'ContainerRunning', reason: 'Updating' }));
    const rec = (await cp.services.store.get('pods', pod.body.id))!;
    expect(rec.gpuUuids).toHaveLength(2);
    expect(rec.costPerHr).toBeCloseTo(pod.body.cost * 2, 4);
    // its two GPUs are held: the other host takes the next 2-GPU pod, and a third is refused
    const next = await createPod(cp, body(2), user.key);
    expect(next.body.machineId).not.toBe(pod.body.machineId);
    expect((await call(cp, '/v2/pods', { method: 'POST', json: body(1), key: user.key })).body.code).toBe('CAPACITY_UNAVAILABLE');
    await terminateAll();
  });

  test('moves to a host with room when its own has none, keeping its id', async () => {
    const pod = await createPod(cp, body(1), user.key);
    // its host's other GPU taken
    const neighbour = await createPod(cp, body(1), user.key);
    expect(neighbour.body.machineId).toBe(pod.body.machineId);
    const c = await patch(pod.body.id, { gpu: { count: 2 } });
    expect(c.status, c.text).toBe(200);
    expect(c.body.id).toBe(pod.body.id);
    expect(c.body.machineId).not.toBe(pod.body.machineId);
    expect(c.body.statusReason).toContain(`moved from host ${pod.body.machineId}`);
    await terminateAll();
  });

  test('a resize that cannot be placed is refused and leaves the pod exactly as it was', async () => {
    const pod = await createPod(cp, body(1, { mounts: { persistent: { size: 20, path: '/workspace' } } }), user.key);
    await createPod(cp, body(1), user.key); // fills its (pinned) host
    const before = await snapshotPods(cp, user.key);
    const stored = JSON.stringify(await cp.services.store.get('pods', pod.body.id));
    const c = await patch(pod.body.id, { gpu: { count: 2 }, env: { CHANGED: '1' } });
    expectProblem(c, 400, { code: 'CAPACITY_UNAVAILABLE' });
    expect(await snapshotPods(cp, user.key)).toBe(before);
    expect(JSON.stringify(await cp.services.store.get('pods', pod.body.id))).toBe(stored);
    // beyond any host: PLACEMENT_IMPOSSIBLE, same rule
    expectProblem(await patch(pod.body.id, { gpu: { count: 3 } }), 400, { code: 'PLACEMENT_IMPOSSIBLE' });
    expect(JSON.stringify(await cp.services.store.get('pods', pod.body.id))).toBe(stored);
    await terminateAll();
  });

  test('a stopped pod takes the count at its next start; a CPU pod has none to change; the type never changes', async () => {
    const pod = await createPod(cp, body(1), user.key);
    await call(cp, `/v2/pods/${pod.body.id}/action`, { method: 'POST', json: { action: 'stop' }, key: user.key });
    const c = await patch(pod.body.id, { gpu: { count: 2 } });
    expect(c.status, c.text).toBe(200);
    expect(c.body.gpu.count).toBe(2);
    expect((await cp.services.store.get('pods', pod.body.id))!.gpuUuids).toEqual([]);
    const started = await call(cp, `/v2/pods/${pod.body.id}/action`, { method: 'POST', json: { action: 'start' }, key: user.key });
    expect(started.status, started.text).toBe(200);
    expect((await cp.services.store.get('pods', pod.body.id))!.gpuUuids).toHaveLength(2);

    const cpu = await createPod(cp, cpuBody({ dataCenterIds: [DC] }), user.key);
    expectProblem(await patch(cpu.body.id, { gpu: { count: 2 } }), 422, { code: 'VALIDATION_FAILED', errorMatching: '$.gpu' });
    expectProblem(await patch(pod.body.id, { gpu: { id: 'NVIDIA A100-SXM4-80GB', count: 2 } }), 422, { errorMatching: '$.gpu' });
    expect((await get(pod.body.id)).gpu).toEqual({ id: 'NVIDIA H100 80GB HBM3', count: 2 });
    await terminateAll();
  });
});
