// Plan then apply on the embedded store (docs/placement.md): a plan that went stale between planning
// and applying is caught by the verification inside the pod's transaction and planned again, or the
// request is refused; a GPU is never held twice. The fault: at the placer's seam between plan and
// apply (FleetPlacer.onPlan), a placement of another pod onto the planned GPUs is written into the
// applying transaction, as another replica's commit lands on PostgreSQL.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { PodRecord } from '../../model/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
let cp: TestControlPlane;
let hostId: string;
let template: PodRecord;
let stopListening: (() => void) | null = null;
let intruders = 0;

beforeAll(async () => {
  cp = await startTestControlPlane();
  hostId = (await seedHosts(cp.services.store, [{ gpus: 4 }]))[0]!.id;
  const r = await cp.api('/v2/pods', { method: 'POST', json: { name: 'first', image: 'img', disk: 1, gpu: { id: H100 } } });
  expect(r.status).toBe(201);
  template = (await cp.services.store.get('pods', ((await r.json()) as { id: string }).id))!;
});
afterEach(() => stopListening?.());
afterAll(async () => cp?.close());

/** For the next `times` plans: each planned placement's GPUs taken by another pod before the plan is applied. */
function intrude(times: number): { plans: string[][]; intruders: string[] } {
  const seen = { plans: [] as string[][], intruders: [] as string[] };
  stopListening = cp.services.placer.onPlan((tx, plan) => {
    const p = plan.placements[0];
    seen.plans.push(p ? p.gpuUuids : []);
    if (!p || seen.intruders.length >= times) return;
    const id = `intruder-${++intruders}`;
    seen.intruders.push(id);
    tx.put('pods', { ...template, id, name: id, hostId: p.hostId, gpuUuids: p.gpuUuids, allocated: true });
  });
  return seen;
}

const create = (name: string) => cp.api('/v2/pods', { method: 'POST', json: { name, image: 'img', disk: 1, gpu: { id: H100 } } });

async function heldGpus(): Promise<string[]> {
  return (await cp.services.store.list('pods')).filter((p) => p.allocated).flatMap((p) => p.gpuUuids);
}

test('a create whose plan went stale before it was applied is planned again onto free GPUs', async () => {
  const seen = intrude(1);
  const r = await create('second');
  expect(r.status).toBe(201);
  const body = (await r.json()) as { id: string; machineId: string };
  expect(body.machineId).toBe(hostId);
  const pod = (await cp.services.store.get('pods', body.id))!;
  // planned twice: the first plan's GPU went to the intruder, the second avoided it
  expect(seen.plans).toHaveLength(2);
  const intruder = (await cp.services.store.get('pods', seen.intruders[0]!))!;
  expect(intruder.gpuUuids).toEqual(seen.plans[0]);
  expect(pod.gpuUuids).toEqual(seen.plans[1]);
  expect(pod.gpuUuids).not.toEqual(intruder.gpuUuids);
  const held = await heldGpus();
  expect(new Set(held).size).toBe(held.length);
  expect(held).toHaveLength(3);
});

test('a start whose plan went stale is planned again too', async () => {
  const pods = (await cp.services.store.list('pods')).filter((p) => p.name === 'second');
  const id = pods[0]!.id;
  expect((await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'stop' } })).status).toBe(200);
  const seen = intrude(1);
  const r = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'start' } });
  expect(r.status).toBe(200);
  expect(seen.plans).toHaveLength(2);
  const pod = (await cp.services.store.get('pods', id))!;
  expect(pod.allocated).toBe(true);
  expect(pod.gpuUuids).toEqual(seen.plans[1]);
  const held = await heldGpus();
  expect(new Set(held).size).toBe(held.length);
  expect(held).toHaveLength(4);
});

test('a re-plan that finds nothing free is refused as today, nothing of it written', async () => {
  const [first] = (await cp.services.store.list('pods')).filter((p) => p.name === 'first');
  expect((await cp.api(`/v2/pods/${first!.id}/action`, { method: 'POST', json: { action: 'stop' } })).status).toBe(200);
  const before = await cp.services.store.list('pods');
  const seen = intrude(1);
  const r = await create('third');
  expect(r.status).toBe(400);
  const problem = (await r.json()) as { code: string; detail: string };
  expect(problem.code).toBe('CAPACITY_UNAVAILABLE');
  expect(problem.detail).toMatch(/fewer than 1 free GPUs/);
  // the one free GPU planned, taken meanwhile; the second plan knew it and refused
  expect(seen.plans).toEqual([first!.gpuUuids, []]);
  expect(await cp.services.store.list('pods')).toEqual(before);
  // the placer's index does not keep the intruder that went with the refused transaction: the GPU is placed at once
  stopListening?.();
  const again = await create('third');
  expect(again.status).toBe(201);
  expect((await cp.services.store.get('pods', ((await again.json()) as { id: string }).id))!.gpuUuids).toEqual(first!.gpuUuids);
});

test('a plan that keeps going stale is re-planned a bounded number of times, then refused', async () => {
  await seedHosts(cp.services.store, [{ gpus: 8 }]);
  const before = await cp.services.store.list('pods');
  const seen = intrude(Infinity);
  const r = await create('fourth');
  expect(r.status).toBe(400);
  const problem = (await r.json()) as { code: string; detail: string };
  expect(problem.code).toBe('CAPACITY_UNAVAILABLE');
  expect(problem.detail).toMatch(/kept being filled by concurrent requests/);
  // the first plan and three more (REPLANS), each on GPUs the one before it lost
  expect(seen.plans).toHaveLength(4);
  expect(new Set(seen.plans.flat()).size).toBe(4);
  expect(await cp.services.store.list('pods')).toEqual(before);
  stopListening?.();
  expect((await create('fourth')).status).toBe(201);
});

test('a refused placement logs, at debug, which constraint excluded which hosts; the 400 is as before', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const own = await startTestControlPlane({ logger: pino({ level: 'debug' }, sink) });
  try {
    const [full, cpu] = await seedHosts(own.services.store, [{ gpus: 1 }, { gpus: 0 }]);
    expect((await own.api('/v2/pods', { method: 'POST', json: { name: 'a', image: 'img', disk: 1, gpu: { id: H100 } } })).status).toBe(201);
    const r = await own.api('/v2/pods', { method: 'POST', json: { name: 'b', image: 'img', disk: 1, gpu: { id: H100 } } });
    expect(r.status).toBe(400);
    const problem = (await r.json()) as Record<string, unknown>;
    expect(Object.keys(problem).sort()).toEqual(['code', 'detail', 'status', 'title']);
    expect(problem.code).toBe('CAPACITY_UNAVAILABLE');
    const refused = lines.find((l) => l.msg === 'placement refused');
    expect(refused).toMatchObject({
      level: 20,
      reason: 'busy',
      constraint: 'gpu-count',
      hosts: [
        { constraint: 'gpu-type', hostCount: 1, hostIds: [cpu!.id] },
        { constraint: 'gpu-count', hostCount: 1, hostIds: [full!.id] },
      ],
    });
  } finally {
    await own.close();
  }
});
