// Plan, then apply (docs/placement.md): what a plan holds, why it refuses per host, and the
// verification that catches a plan gone stale between planning and applying.
import { describe, expect, it } from 'vitest';
import type { HostRecord, PodRecord } from '../../model/index.ts';
import { A100, H100, host } from './fixtures/test-hosts.ts';
import { allocationConflict, hostLoadConflict, verifyPlan, type PlanView } from '../../fleet/host-load.ts';
import { placementError, Scheduler, type PlacementRequest } from '../../fleet/scheduler.ts';

const gpuReq = (count = 1, extra: Partial<PlacementRequest> = {}): PlacementRequest => ({ gpu: { typeIds: [H100], count }, cloud: 'ALL', diskGb: 20, ...extra });

/** a placed pod record with the fields the rule counts */
const placed = (id: string, hostId: string, gpuUuids: string[], over: Partial<PodRecord> = {}): PodRecord =>
  ({ id, allocated: true, hostId, gpuUuids, reservedVcpu: 0, reservedMemoryGb: 0, disk: 20, mounts: {}, ...over }) as PodRecord;

/** a store's view of hosts and placed pods, as verifyPlan reads it in a transaction */
function view(hosts: HostRecord[], pods: PodRecord[]): PlanView {
  return {
    host: async (id) => hosts.find((h) => h.id === id),
    placedPods: async (id) => pods.filter((p) => p.allocated && p.hostId === id),
  };
}

describe('Scheduler.plan', () => {
  it('proposes placements with what each pod takes, no evictions, and records nothing', () => {
    const s = new Scheduler([host('h1', { gpus: 2 }), host('h2', { gpus: 8 })]);
    const plan = s.plan([
      { podId: 'a', request: gpuReq(2, { minVcpu: 4, minMemoryGb: 16 }) },
      { podId: 'b', request: gpuReq(1) },
    ]);
    expect(plan.evictions).toEqual([]);
    expect(plan.refusals).toEqual([]);
    // the best fit takes the 2-GPU host whole; the second request sees it taken and goes to h2
    expect(plan.placements).toEqual([
      { podId: 'a', hostId: 'h1', dataCenterId: 'US-TX-1', gpuUuids: ['h1-gpu0', 'h1-gpu1'], gpuTypeId: H100, vcpu: 4, memoryGb: 16, diskGb: 20 },
      { podId: 'b', hostId: 'h2', dataCenterId: 'US-TX-1', gpuUuids: ['h2-gpu0'], gpuTypeId: H100, vcpu: 0, memoryGb: 0, diskGb: 20 },
    ]);
    expect(s.allocations()).toEqual([]);
    expect(s.find(gpuReq(2))).toMatchObject({ ok: true, hostId: 'h1' });
  });

  it('a refusal carries the diagnosis and, per constraint, the hosts it excluded', () => {
    const s = new Scheduler(
      [
        host('busy', { gpus: 1 }),
        host('small', { gpus: 1, disk: 5 }),
        host('a100', { gpus: 4, type: A100 }),
        host('cpu', {}),
        host('drained', { gpus: 2, drained: true }),
        host('far', { gpus: 4, dc: 'EU-RO-1' }),
      ],
      [{ podId: 'x', hostId: 'busy', gpuUuids: ['busy-gpu0'], vcpu: 0, memoryGb: 0, diskGb: 0 }],
    );
    const plan = s.plan([{ podId: 'p', request: gpuReq(1, { dataCenterIds: ['US-TX-1'] }) }]);
    expect(plan.placements).toEqual([]);
    expect(plan.refusals).toHaveLength(1);
    const [refusal] = plan.refusals;
    // today's diagnosis, unchanged: what `find` answers
    expect(refusal!.failure).toEqual(s.find(gpuReq(1, { dataCenterIds: ['US-TX-1'] })));
    expect(refusal!.failure).toMatchObject({ ok: false, reason: 'busy' });
    const byConstraint = Object.fromEntries(refusal!.hosts.map((g) => [g.constraint, g.hostIds]));
    expect(byConstraint).toEqual({
      'gpu-type': ['a100', 'cpu'],
      'data-center': ['far'],
      disk: ['small'],
      'host-status': ['drained'],
      'gpu-count': ['busy'],
    });
    expect(refusal!.hosts.reduce((n, g) => n + g.hostCount, 0)).toBe(6);
    // the 400 keeps its code, detail and fields; the per-host summary is one more structured field
    const e = placementError(refusal!.failure, refusal!.hosts);
    expect(e.code).toBe('CAPACITY_UNAVAILABLE');
    expect(e.message).toBe(refusal!.failure.detail);
    expect(e.fields).toEqual({ reason: 'busy', constraint: refusal!.failure.constraint, hosts: refusal!.hosts });
    expect(placementError(refusal!.failure).fields).toEqual({ reason: 'busy', constraint: refusal!.failure.constraint });
  });

  it('a refusal names at most 20 host ids per constraint and counts them all', () => {
    const hosts = Array.from({ length: 30 }, (_, i) => host(`c${String(i).padStart(2, '0')}`));
    const [refusal] = new Scheduler(hosts).plan([{ podId: 'p', request: gpuReq(1) }]).refusals;
    expect(refusal!.failure).toMatchObject({ reason: 'impossible', constraint: 'gpu-type' });
    expect(refusal!.hosts).toEqual([{ constraint: 'gpu-type', hostCount: 30, hostIds: hosts.slice(0, 20).map((h) => h.id) }]);
  });
});

describe('verifyPlan: the commit re-checks every host the plan touches', () => {
  it('passes a plan made from the state it is applied to', async () => {
    const hosts = [host('h1', { gpus: 2 })];
    const plan = new Scheduler(hosts).plan([{ podId: 'p', request: gpuReq(1) }]);
    expect(await verifyPlan(plan, view(hosts, []))).toEqual([]);
  });

  it('catches a stale plan: another placement took the planned GPUs after the snapshot', async () => {
    const hosts = [host('h1', { gpus: 2 })];
    const snapshot = new Scheduler(hosts);
    const plan = snapshot.plan([{ podId: 'late', request: gpuReq(2) }]);
    expect(plan.placements[0]!.gpuUuids).toEqual(['h1-gpu0', 'h1-gpu1']);
    // committed meanwhile (another request, another replica): one of those GPUs
    const other = placed('early', 'h1', ['h1-gpu1']);
    expect(await verifyPlan(plan, view(hosts, [other]))).toEqual([
      { hostId: 'h1', constraint: 'gpu-count', detail: 'GPU h1-gpu1 of host h1 is held by another pod' },
    ]);
    // planned again from a snapshot that knows it: refused (busy), never the GPU twice
    snapshot.record({ podId: 'early', hostId: 'h1', gpuUuids: ['h1-gpu1'], vcpu: 0, memoryGb: 0, diskGb: 20 });
    const again = snapshot.plan([{ podId: 'late', request: gpuReq(2) }]);
    expect(again.placements).toEqual([]);
    expect(again.refusals[0]!.failure).toMatchObject({ reason: 'busy', constraint: 'gpu-count' });
  });

  it('catches vCPU, memory and disk taken meanwhile, and a host gone', async () => {
    const hosts = [host('h1', { gpus: 2, cpu: 16, disk: 100 })];
    const plan = new Scheduler(hosts).plan([{ podId: 'p', request: gpuReq(1, { minVcpu: 10, diskGb: 50 }) }]);
    expect(await verifyPlan(plan, view(hosts, [placed('o', 'h1', [], { reservedVcpu: 8 })]))).toMatchObject([{ hostId: 'h1', constraint: 'cpu-memory' }]);
    expect(await verifyPlan(plan, view(hosts, [placed('o', 'h1', [], { disk: 60 })]))).toMatchObject([{ hostId: 'h1', constraint: 'disk' }]);
    expect(await verifyPlan(plan, view([], []))).toMatchObject([{ hostId: 'h1', detail: 'host h1 is no longer enrolled' }]);
    // the planned pod's own earlier version (a start after a stop written unallocated, a restart) is not counted twice
    expect(await verifyPlan(plan, view(hosts, [placed('p', 'h1', ['h1-gpu0'], { reservedVcpu: 10, disk: 50 })]))).toEqual([]);
  });

  it('one rule for both stores: a GPU held twice or not on the host, and room', () => {
    const h = host('h1', { gpus: 2, cpu: 8 });
    expect(hostLoadConflict(h, [placed('a', 'h1', ['h1-gpu0']), placed('b', 'h1', ['h1-gpu1'])])).toBeNull();
    expect(hostLoadConflict(h, [placed('a', 'h1', ['h1-gpu0']), placed('b', 'h1', ['h1-gpu0'])])).toMatchObject({ constraint: 'gpu-count' });
    expect(hostLoadConflict(h, [placed('a', 'h1', ['h2-gpu0'])])).toMatchObject({ constraint: 'gpu-count' });
    expect(hostLoadConflict(h, [placed('a', 'h1', [], { reservedVcpu: 5 }), placed('b', 'h1', [], { reservedVcpu: 4 })])).toMatchObject({ constraint: 'cpu-memory' });
    // pods on other hosts and released pods count for nothing
    expect(hostLoadConflict(h, [placed('a', 'h2', ['h1-gpu0']), placed('b', 'h1', ['h1-gpu0'], { allocated: false }), placed('c', 'h1', ['h1-gpu0'])])).toBeNull();
    expect(allocationConflict(h, [])).toBeNull();
  });
});
