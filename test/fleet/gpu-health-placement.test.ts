// A GPU in FAILURE is never placed on, in the index (plan, find, place), in the verification of a plan
// inside the transaction (a plan made before the index learned of the failure) and in stock; a
// WARNING GPU stays schedulable and in stock (docs/gpu-health.md).
import { describe, expect, it } from 'vitest';
import type { GpuHealth, HostRecord } from '../../model/index.ts';
import { H100, host } from './fixtures/test-hosts.ts';
import { verifyPlan } from '../../fleet/host-load.ts';
import { Scheduler, type PlacementRequest } from '../../fleet/scheduler.ts';
import { freeGpusByType, stockByType } from '../../fleet/stock.ts';

const req = (count = 1): PlacementRequest => ({ gpu: { typeIds: [H100], count }, cloud: 'ALL', diskGb: 20 });

function withHealth(h: HostRecord, health: Record<number, GpuHealth>): HostRecord {
  return { ...h, facts: { ...h.facts, gpus: h.facts.gpus.map((g) => (health[g.index] ? { ...g, health: health[g.index] } : g)) } };
}

describe('placement skips FAILURE GPUs', () => {
  it('never places on a FAILURE GPU; the host\'s other GPUs still take pods', () => {
    const s = new Scheduler([withHealth(host('h1', { gpus: 2 }), { 0: 'FAILURE' })]);
    expect(s.find(req(1))).toMatchObject({ ok: true, hostId: 'h1', gpuUuids: ['h1-gpu1'] });
    expect(s.find(req(2))).toMatchObject({ ok: false });
    expect(s.place(req(1), 'p1')).toMatchObject({ ok: true, gpuUuids: ['h1-gpu1'] });
    expect(s.find(req(1))).toMatchObject({ ok: false });
    // releasing the pod frees its GPU, never the failed one
    s.release('p1');
    expect(s.find(req(2))).toMatchObject({ ok: false });
    expect(s.plan([{ podId: 'a', request: req(1) }, { podId: 'b', request: req(1) }]).refusals.map((r) => r.podId)).toEqual(['b']);
  });
  it('a WARNING GPU stays schedulable', () => {
    const s = new Scheduler([withHealth(host('h1', { gpus: 1 }), { 0: 'WARNING' })]);
    expect(s.find(req(1))).toMatchObject({ ok: true, gpuUuids: ['h1-gpu0'] });
  });
  it('a GPU that fails and returns is indexed again by the host\'s update', () => {
    const h = host('h1', { gpus: 1 });
    const s = new Scheduler([h]);
    s.upsertHost(withHealth(h, { 0: 'FAILURE' }));
    expect(s.find(req(1))).toMatchObject({ ok: false });
    s.upsertHost(withHealth(h, { 0: 'HEALTHY' }));
    expect(s.find(req(1))).toMatchObject({ ok: true });
  });
  it('a pod already on a GPU that then fails keeps its allocation; nothing else lands on that GPU', () => {
    const h = host('h1', { gpus: 2 });
    const s = new Scheduler([h], [{ podId: 'old', hostId: 'h1', gpuUuids: ['h1-gpu0'], vcpu: 0, memoryGb: 0, diskGb: 0 }]);
    s.upsertHost(withHealth(h, { 0: 'FAILURE' }));
    expect(s.allocation('old')).toMatchObject({ gpuUuids: ['h1-gpu0'] });
    expect(s.find(req(1))).toMatchObject({ ok: true, gpuUuids: ['h1-gpu1'] });
    s.release('old');
    expect(s.find(req(2))).toMatchObject({ ok: false });
  });
  it('the transaction\'s verification refuses a plan onto a GPU that failed after the plan was made', async () => {
    const h = host('h1', { gpus: 1 });
    const plan = new Scheduler([h]).plan([{ podId: 'a', request: req(1) }]);
    const failedNow = withHealth(h, { 0: 'FAILURE' });
    expect(await verifyPlan(plan, { host: async () => failedNow, placedPods: async () => [] })).toMatchObject([{ hostId: 'h1', constraint: 'gpu-count' }]);
    expect(await verifyPlan(plan, { host: async () => h, placedPods: async () => [] })).toEqual([]);
  });
  it('stock counts HEALTHY and WARNING GPUs, never FAILURE ones', () => {
    const hosts = [withHealth(host('h1', { gpus: 4 }), { 0: 'FAILURE', 1: 'WARNING' })];
    expect(freeGpusByType(hosts, []).get(H100)).toBe(3);
    expect(stockByType(hosts, []).get(H100)).toMatchObject({ free: 3, maxPlaceable: 3 });
  });
});
