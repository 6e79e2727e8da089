// Preemption in the plan (docs/teams.md "Interruptible pods"): which interruptible pods give their GPUs
// back, in which order, only when nothing is free; the evictions the plan carries and the commit checks.
import { describe, expect, it } from 'vitest';
import type { PodRecord } from '../../model/index.ts';
import { A100, H100, host } from './fixtures/test-hosts.ts';
import { verifyPlan } from '../../fleet/host-load.ts';
import { Scheduler, type Allocation, type PlacementRequest } from '../../fleet/scheduler.ts';

const req = (count: number, extra: Partial<PlacementRequest> = {}): PlacementRequest => ({ gpu: { typeIds: [H100], count }, cloud: 'ALL', diskGb: 0, ...extra });
const onDemand = (count: number, extra: Partial<PlacementRequest> = {}) => req(count, { preemptBelow: Infinity, ...extra });

/** an allocation on `hostId` of the GPUs with these indexes; a bid makes it interruptible */
function alloc(podId: string, hostId: string, gpus: number[], bid?: number, startedAtMs = 0): Allocation {
  return { podId, hostId, gpuUuids: gpus.map((i) => `${hostId}-gpu${i}`), vcpu: 0, memoryGb: 0, diskGb: 0, ...(bid !== undefined ? { bid, startedAtMs } : {}) };
}

const plan1 = (s: Scheduler, request: PlacementRequest) => s.plan([{ podId: 'new', request }]);

describe('preemption in the plan', () => {
  it('a free GPU is taken before any interruptible pod is disturbed', () => {
    const s = new Scheduler([host('h1', { gpus: 2 })], [alloc('spot', 'h1', [0], 0.5)]);
    const plan = plan1(s, onDemand(1));
    expect(plan.evictions).toEqual([]);
    expect(plan.placements[0]!.gpuUuids).toEqual(['h1-gpu1']);
  });

  it('an on-demand request on a full host takes the lowest bid, then the most recently started, fewest pods', () => {
    const s = new Scheduler(
      [host('h1', { gpus: 4 })],
      [alloc('cheap-old', 'h1', [0], 0.5, 1000), alloc('cheap-new', 'h1', [1], 0.5, 2000), alloc('dear', 'h1', [2], 0.9), alloc('reserved', 'h1', [3])],
    );
    const one = plan1(s, onDemand(1));
    expect(one.evictions).toEqual([{ podId: 'cheap-new', hostId: 'h1', forPodId: 'new', bidPerGpu: 0.5, reason: 'preempted' }]);
    expect(one.placements[0]).toMatchObject({ hostId: 'h1', gpuUuids: ['h1-gpu1'] });
    const two = plan1(s, onDemand(2));
    expect(two.evictions.map((e) => e.podId).sort()).toEqual(['cheap-new', 'cheap-old']);
    // never an on-demand pod, and never more than the 3 interruptible GPUs there are
    expect(plan1(s, onDemand(4)).refusals).toHaveLength(1);
    // a plan records nothing: the victims are still there
    expect(s.allocations()).toHaveLength(4);
  });

  it('fewest pods disturbed: one 2-GPU pod rather than two 1-GPU pods at the same bid', () => {
    const s = new Scheduler([host('a', { gpus: 2 }), host('b', { gpus: 2 })], [alloc('a1', 'a', [0], 0.5), alloc('a2', 'a', [1], 0.5), alloc('b1', 'b', [0, 1], 0.5)]);
    expect(plan1(s, onDemand(2)).evictions.map((e) => e.podId)).toEqual(['b1']);
  });

  it('across hosts the lowest highest bid wins, even if it disturbs more pods', () => {
    const s = new Scheduler([host('a', { gpus: 2 }), host('b', { gpus: 2 })], [alloc('a1', 'a', [0], 0.3), alloc('a2', 'a', [1], 0.3), alloc('b1', 'b', [0, 1], 0.8)]);
    expect(plan1(s, onDemand(2)).evictions.map((e) => e.podId).sort()).toEqual(['a1', 'a2']);
  });

  it('a bid preempts only lower bids, never equal ones, and never on-demand pods', () => {
    const s = new Scheduler([host('h1', { gpus: 2 })], [alloc('low', 'h1', [0], 0.4), alloc('mid', 'h1', [1], 0.6)]);
    expect(plan1(s, req(1, { preemptBelow: 0.4 })).refusals).toHaveLength(1);
    expect(plan1(s, req(1, { preemptBelow: 0.41 })).evictions.map((e) => e.podId)).toEqual(['low']);
    expect(plan1(s, req(2, { preemptBelow: 0.6 })).refusals).toHaveLength(1);
    expect(plan1(s, req(2, { preemptBelow: 0.61 })).evictions.map((e) => e.podId).sort()).toEqual(['low', 'mid']);
    // a request without preemptBelow (CPU pods, anything that never preempts) is refused as before
    expect(plan1(s, req(1)).refusals[0]!.failure).toMatchObject({ reason: 'busy' });
    const reserved = new Scheduler([host('h1', { gpus: 1 })], [alloc('r', 'h1', [0])]);
    expect(plan1(reserved, onDemand(1)).refusals).toHaveLength(1);
  });

  it('only pods holding GPUs of the wanted type, on hosts that match the request, are taken', () => {
    const s = new Scheduler([host('h', { gpus: 1 }), host('a', { gpus: 1, type: A100 }), host('eu', { gpus: 1, dc: 'EU-RO-1' })], [
      alloc('h1', 'h', [0], 0.9),
      alloc('a1', 'a', [0], 0.1),
      alloc('eu1', 'eu', [0], 0.1),
    ]);
    expect(plan1(s, onDemand(1, { dataCenterIds: ['US-TX-1'] })).evictions.map((e) => e.podId)).toEqual(['h1']);
  });

  it('a victim that frees vCPUs a request lacks counts too', () => {
    const s = new Scheduler([host('h', { gpus: 2, cpu: 16 })], [{ ...alloc('big', 'h', [0], 0.5), vcpu: 14 }, alloc('small', 'h', [1], 0.2)]);
    // the GPU alone (small) does not make room for 8 vCPUs: big goes too
    expect(plan1(s, onDemand(1, { minVcpu: 8 })).evictions.map((e) => e.podId).sort()).toEqual(['big']);
  });

  it('outbid: 0 while a GPU is free, the highest bid the best preemption takes, null when nothing could', () => {
    const s = new Scheduler([host('a', { gpus: 2 }), host('b', { gpus: 1 })], [alloc('a1', 'a', [0], 0.3), alloc('a2', 'a', [1], 0.7), alloc('b1', 'b', [0], 0.5)]);
    expect(s.outbid(req(1))).toBe(0.3);
    expect(s.outbid(req(2))).toBe(0.7);
    expect(s.outbid(req(3))).toBeNull();
    s.release('a1');
    expect(s.outbid(req(1))).toBe(0);
  });

  it('requests later in one plan see the earlier ones\' victims gone and placements made', () => {
    const s = new Scheduler([host('h', { gpus: 2 })], [alloc('s1', 'h', [0], 0.2), alloc('s2', 'h', [1], 0.3)]);
    const plan = s.plan([
      { podId: 'p1', request: onDemand(1) },
      { podId: 'p2', request: onDemand(1) },
    ]);
    expect(plan.evictions.map((e) => [e.podId, e.forPodId])).toEqual([['s1', 'p1'], ['s2', 'p2']]);
    expect(plan.placements.map((p) => p.gpuUuids[0])).toEqual(['h-gpu0', 'h-gpu1']);
    expect(s.allocations().map((a) => a.podId).sort()).toEqual(['s1', 's2']);
  });

  it('the commit applies evictions: the victim no longer counts, unless its bid changed since the plan', async () => {
    const h = host('h', { gpus: 1 });
    const s = new Scheduler([h], [alloc('spot', 'h', [0], 0.5)]);
    const plan = plan1(s, onDemand(1));
    const spot = { id: 'spot', allocated: true, hostId: 'h', gpuUuids: ['h-gpu0'], reservedVcpu: 0, reservedMemoryGb: 0, disk: 0, mounts: {}, interruptible: true, bidPerGpu: 0.5 } as unknown as PodRecord;
    const view = (pods: PodRecord[]) => ({ host: async () => h, placedPods: async () => pods });
    expect(await verifyPlan(plan, view([spot]))).toEqual([]);
    expect(await verifyPlan(plan, view([{ ...spot, bidPerGpu: 0.9 }]))).toMatchObject([{ hostId: 'h', constraint: 'gpu-count' }]);
    // without the eviction the same plan is a GPU held twice
    expect(await verifyPlan({ ...plan, evictions: [] }, view([spot]))).toMatchObject([{ constraint: 'gpu-count' }]);
  });
});
