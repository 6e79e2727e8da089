import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CloudTier } from '../../model/index.ts';
import { A100, H100, host, RTX4090 } from './fixtures/test-hosts.ts';
import {
  type Allocation,
  type PlacementRequest,
  type PlacementResult,
  Scheduler,
  compareCudaVersions,
  placeOnce,
  placementError,
} from '../../fleet/scheduler.ts';
import { availableGpuCounts, freeGpusByDataCenter, freeGpusByType, stockByType, stockStatus } from '../../fleet/stock.ts';

const gpuReq = (typeIds: string | string[], count = 1, extra: Partial<PlacementRequest> = {}): PlacementRequest => ({
  gpu: { typeIds: Array.isArray(typeIds) ? typeIds : [typeIds], count },
  cloud: 'ALL',
  diskGb: 20,
  ...extra,
});
const cpuReq = (vcpuCount = 2, memoryGb = 4, extra: Partial<PlacementRequest> = {}): PlacementRequest => ({
  cpu: { flavorId: 'cpu3c', vcpuCount, memoryGb },
  cloud: 'ALL',
  diskGb: 10,
  ...extra,
});

function expectFailure(r: PlacementResult, reason: 'impossible' | 'busy', constraint: string): string {
  expect(r.ok).toBe(false);
  if (r.ok) throw new Error('unreachable');
  expect({ reason: r.reason, constraint: r.constraint }).toEqual({ reason, constraint });
  expect(r.detail.length).toBeGreaterThan(10);
  return r.detail;
}

describe('impossible: the constraint that eliminated the last candidates', () => {
  const fleet = [host('h1', { gpus: 8 }), host('h2', { gpus: 8, dc: 'US-CA-2' }), host('c1', { cpu: 32, mem: 128 })];

  it('no hosts enrolled', () => expectFailure(placeOnce([], [], gpuReq(H100)), 'impossible', 'no-hosts'));
  it('gpu type', () => expectFailure(placeOnce(fleet, [], gpuReq(A100)), 'impossible', 'gpu-type'));
  it('gpu count', () => {
    expect(expectFailure(placeOnce(fleet, [], gpuReq(H100, 16)), 'impossible', 'gpu-count')).toContain('most on one host is 8');
  });
  it('cloud', () => expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { cloud: 'COMMUNITY' })), 'impossible', 'cloud'));
  it('data center', () => {
    const d = expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { dataCenterIds: ['EU-RO-1'] })), 'impossible', 'data-center');
    expect(d).toContain('US-CA-2');
  });
  it('gpu type is blamed before location when the type exists nowhere', () => {
    expectFailure(placeOnce(fleet, [], gpuReq(A100, 1, { dataCenterIds: ['EU-RO-1'] })), 'impossible', 'gpu-type');
  });
  it('cuda version', () => {
    expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { allowedCudaVersions: ['12.2', '12.5'] })), 'impossible', 'cuda-version');
    expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { minCudaVersion: '12.10' })), 'impossible', 'cuda-version');
  });
  it('cpu/memory', () => {
    expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { minVcpu: 128 })), 'impossible', 'cpu-memory');
    expectFailure(placeOnce(fleet, [], cpuReq(2, 4, { minMemoryGb: 4096 })), 'impossible', 'cpu-memory');
  });
  it('disk', () => expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { diskGb: 5000 })), 'impossible', 'disk'));
  it('cpu flavor', () => {
    expectFailure(placeOnce(fleet, [], { ...cpuReq(), cpu: { flavorId: 'cpu9x', vcpuCount: 2, memoryGb: 4 } }), 'impossible', 'cpu-flavor');
  });
  it('pinned host', () => expectFailure(placeOnce(fleet, [], gpuReq(H100, 1, { pinnedHostId: 'gone' })), 'impossible', 'pinned-host'));
});

describe('cuda filter', () => {
  it('compares major.minor numerically', () => {
    expect(compareCudaVersions('12.10', '12.4')).toBeGreaterThan(0);
    expect(compareCudaVersions('11.8', '12.0')).toBeLessThan(0);
    expect(compareCudaVersions('12.4', '12.04')).toBe(0);
  });
  it('keeps only hosts with an allowed version, and honours a minimum', () => {
    const fleet = [host('old', { gpus: 8, cuda: '12.2' }), host('new', { gpus: 8, cuda: '12.10' })];
    const a = placeOnce(fleet, [], gpuReq(H100, 1, { allowedCudaVersions: ['12.10'] }));
    expect(a.ok && a.hostId).toBe('new');
    const b = placeOnce(fleet, [], gpuReq(H100, 1, { minCudaVersion: '12.4' }));
    expect(b.ok && b.hostId).toBe('new'); // 12.10 ≥ 12.4; a string compare would pick neither
    const c = placeOnce(fleet, [], gpuReq(H100, 1, { allowedCudaVersions: ['12.2'] }));
    expect(c.ok && c.hostId).toBe('old');
  });
});

describe('busy vs impossible', () => {
  it('a full host is busy, and capacity comes back on release', () => {
    const s = new Scheduler([host('h1', { gpus: 8 })]);
    expect(s.place(gpuReq(H100, 8), 'p1').ok).toBe(true);
    const d = expectFailure(s.place(gpuReq(H100, 1), 'p2'), 'busy', 'gpu-count');
    expect(placementError(s.find(gpuReq(H100, 1)) as Extract<PlacementResult, { ok: false }>).code).toBe('CAPACITY_UNAVAILABLE');
    expect(d).toContain('fewer than 1 free');
    expectFailure(s.find(gpuReq(H100, 9)), 'impossible', 'gpu-count');
    expect(s.release('p1')).toBe(true);
    expect(s.release('p1')).toBe(false);
    expect(s.place(gpuReq(H100, 1), 'p2').ok).toBe(true);
  });

  it('cpu and disk taken now are busy, not impossible', () => {
    const s = new Scheduler([host('h1', { gpus: 8, cpu: 16, disk: 100 })]);
    expect(s.place(gpuReq(H100, 1, { minVcpu: 12 }), 'p1').ok).toBe(true);
    expectFailure(s.find(gpuReq(H100, 1, { minVcpu: 8 })), 'busy', 'cpu-memory');
    expect(s.place(gpuReq(H100, 1, { diskGb: 80 }), 'p2').ok).toBe(true);
    expectFailure(s.find(gpuReq(H100, 1, { diskGb: 50 })), 'busy', 'disk');
  });

  it('drained and unreachable hosts are skipped; if only they fit, it is busy (host-status)', () => {
    const fleet = [host('a', { gpus: 8, drained: true }), host('b', { gpus: 8, status: 'UNREACHABLE' }), host('c', { gpus: 2 })];
    const r = placeOnce(fleet, [], gpuReq(H100, 2));
    expect(r.ok && r.hostId).toBe('c');
    const d = expectFailure(placeOnce(fleet, [], gpuReq(H100, 4)), 'busy', 'host-status');
    expect(d).toMatch(/drained/);
    expect(d).toMatch(/UNREACHABLE/);
    expectFailure(placeOnce([host('p', { gpus: 8, status: 'DRAINING' })], [], gpuReq(H100, 1, { pinnedHostId: 'p' })), 'busy', 'host-status');
  });

  it('a host that becomes drained keeps its pods and stops taking new ones', () => {
    const s = new Scheduler([host('a', { gpus: 8 })]);
    expect(s.place(gpuReq(H100, 4), 'p1').ok).toBe(true);
    s.upsertHost(host('a', { gpus: 8, drained: true }));
    expectFailure(s.find(gpuReq(H100, 1)), 'busy', 'host-status');
    s.upsertHost(host('a', { gpus: 8 }));
    const r = s.place(gpuReq(H100, 4), 'p2');
    expect(r.ok && r.gpuUuids).toEqual(['a-gpu4', 'a-gpu5', 'a-gpu6', 'a-gpu7']);
    expectFailure(s.find(gpuReq(H100, 1)), 'busy', 'gpu-count');
  });
});

describe('packing', () => {
  it('best fit: the host left with the fewest free GPUs wins', () => {
    const hosts = [host('a', { gpus: 8 }), host('b', { gpus: 8 })];
    const allocs: Allocation[] = [{ podId: 'x', hostId: 'b', gpuUuids: ['b-gpu0', 'b-gpu1', 'b-gpu2', 'b-gpu3', 'b-gpu4', 'b-gpu5'], vcpu: 0, memoryGb: 0, diskGb: 0 }];
    const r = placeOnce(hosts, allocs, gpuReq(H100, 2));
    expect(r).toMatchObject({ ok: true, hostId: 'b', gpuUuids: ['b-gpu6', 'b-gpu7'], gpuTypeId: H100 });
    // 3 GPUs do not fit on b (2 free), so a takes them
    expect(placeOnce(hosts, allocs, gpuReq(H100, 3))).toMatchObject({ ok: true, hostId: 'a', gpuUuids: ['a-gpu0', 'a-gpu1', 'a-gpu2'] });
  });

  it('small pods fill one host and keep the other whole', () => {
    const s = new Scheduler([host('b', { gpus: 8 }), host('a', { gpus: 8 })]);
    const hostsUsed = Array.from({ length: 8 }, (_, i) => {
      const r = s.place(gpuReq(H100, 1), `p${i}`);
      return r.ok ? r.hostId : 'none';
    });
    expect(new Set(hostsUsed)).toEqual(new Set(['a'])); // ties break on host id
    expect(s.place(gpuReq(H100, 8), 'big')).toMatchObject({ ok: true, hostId: 'b' });
  });

  it('gpu types are tried in priority order', () => {
    const s = new Scheduler([host('h', { gpus: 8 }), host('a', { gpus: 4, type: A100 })]);
    expect(s.place(gpuReq([A100, H100], 4), 'p1')).toMatchObject({ ok: true, hostId: 'a', gpuTypeId: A100 });
    expect(s.place(gpuReq([A100, H100], 4), 'p2')).toMatchObject({ ok: true, hostId: 'h', gpuTypeId: H100 });
  });

  it('cpu pods prefer hosts without GPUs, then the fullest one', () => {
    const s = new Scheduler([host('g', { gpus: 8 }), host('c1', { cpu: 32, mem: 128 }), host('c2', { cpu: 16, mem: 64 })]);
    expect(s.place(cpuReq(8, 16), 'p1')).toMatchObject({ ok: true, hostId: 'c2', gpuUuids: [], gpuTypeId: null });
    expect(s.place(cpuReq(8, 16), 'p2')).toMatchObject({ ok: true, hostId: 'c2' });
    expect(s.place(cpuReq(8, 16), 'p3')).toMatchObject({ ok: true, hostId: 'c1' });
    expect(s.place(cpuReq(32, 64), 'p4')).toMatchObject({ ok: true, hostId: 'g' }); // no CPU-only host has 32 free
    expect(s.allocation('p4')).toMatchObject({ vcpu: 32, memoryGb: 64, diskGb: 10, gpuUuids: [] });
  });

  it('cpu pods on GPU hosts go where the GPUs are already taken', () => {
    const s = new Scheduler([host('g1', { gpus: 8 }), host('g2', { gpus: 8 })]);
    expect(s.place(gpuReq(H100, 8, { pinnedHostId: 'g2' }), 'full')).toMatchObject({ ok: true, hostId: 'g2' });
    expect(s.place(cpuReq(4, 8), 'cpu')).toMatchObject({ ok: true, hostId: 'g2' });
    expect(s.place(gpuReq(H100, 8), 'whole')).toMatchObject({ ok: true, hostId: 'g1' });
  });

  it('refuses a pod id that already holds an allocation', () => {
    const s = new Scheduler([host('h', { gpus: 8 })]);
    s.place(gpuReq(H100), 'p');
    expect(() => s.place(gpuReq(H100), 'p')).toThrow(/already holds/);
  });
});

describe('never double-assigns a GPU (property)', () => {
  const fleet = [
    host('h1', { gpus: 8, cpu: 32, mem: 256 }),
    host('h2', { gpus: 8, cloud: 'COMMUNITY', dc: 'EU-RO-1', cuda: '12.2' }),
    host('a1', { gpus: 4, type: A100, cpu: 16 }),
    host('r1', { gpus: 2, type: RTX4090, cloud: 'COMMUNITY', disk: 200 }),
    host('c1', { cpu: 16, mem: 64 }),
    host('d1', { gpus: 8, drained: true }),
  ];
  const typeIds = [H100, A100, RTX4090];
  const request = fc.oneof(
    fc.record({
      types: fc.subarray(typeIds, { minLength: 1 }),
      count: fc.integer({ min: 1, max: 9 }),
      cloud: fc.constantFrom<CloudTier | 'ALL'>('ALL', 'SECURE', 'COMMUNITY'),
      minVcpu: fc.integer({ min: 0, max: 20 }),
      diskGb: fc.integer({ min: 1, max: 150 }),
    }).map((r): PlacementRequest => gpuReq(r.types, r.count, { cloud: r.cloud, minVcpu: r.minVcpu, diskGb: r.diskGb })),
    fc.record({ v: fc.constantFrom(2, 4, 8, 16), m: fc.integer({ min: 1, max: 32 }) }).map((r) => cpuReq(r.v, r.m)),
  );
  const op = fc.oneof(
    { weight: 3, arbitrary: request.map((req) => ({ kind: 'place' as const, req })) },
    { weight: 1, arbitrary: fc.nat().map((i) => ({ kind: 'release' as const, i })) },
    // a host drained or undrained: the scheduler keeps what it learnt of its hosts only while they do not change
    { weight: 1, arbitrary: fc.nat().map((i) => ({ kind: 'drain' as const, i })) },
  );

  it('random place/release sequences keep every GPU with at most one pod, matching a fresh placeOnce', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const hosts = [...fleet];
        const s = new Scheduler(hosts);
        const byUuid = new Map(fleet.flatMap((h) => h.facts.gpus.map((g) => [g.uuid, { host: h.id, type: g.typeId }] as const)));
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'release') {
            const live = s.allocations();
            if (live.length > 0) expect(s.release(live[o.i % live.length]!.podId)).toBe(true);
            continue;
          }
          if (o.kind === 'drain') {
            const k = o.i % hosts.length;
            hosts[k] = { ...hosts[k]!, drained: !hosts[k]!.drained };
            s.upsertHost(hosts[k]!);
            continue;
          }
          // the long-lived index and a fresh index over the same state must decide the same, failures' reasons included
          expect(placeOnce(hosts, s.allocations(), o.req)).toEqual(s.find(o.req));
          const r = s.place(o.req, `pod${n++}`);
          if (r.ok) {
            expect(r.gpuUuids).toHaveLength(o.req.gpu?.count ?? 0);
            for (const u of r.gpuUuids) expect(byUuid.get(u)).toEqual({ host: r.hostId, type: r.gpuTypeId });
            expect(hosts.find((h) => h.id === r.hostId)?.drained).toBe(false);
          }
          const seen = new Set<string>();
          for (const a of s.allocations()) {
            for (const u of a.gpuUuids) {
              expect(seen.has(u)).toBe(false);
              seen.add(u);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('stock', () => {
  it('thresholds', () => {
    expect([0, 1, 3, 4, 15, 16, 500].map(stockStatus)).toEqual(['None', 'Low', 'Low', 'Medium', 'Medium', 'High', 'High']);
  });

  it('counts free GPUs per type, per data center, and per single host', () => {
    const hosts = [
      host('h1', { gpus: 8 }),
      host('h2', { gpus: 8, dc: 'EU-RO-1', cloud: 'COMMUNITY' }),
      host('h3', { gpus: 8, drained: true }),
      host('a1', { gpus: 4, type: A100 }),
    ];
    const allocs: Allocation[] = [
      { podId: 'p', hostId: 'h1', gpuUuids: ['h1-gpu0', 'h1-gpu1', 'h1-gpu2'], vcpu: 0, memoryGb: 0, diskGb: 0 },
      { podId: 'q', hostId: 'a1', gpuUuids: ['a1-gpu0', 'a1-gpu1', 'a1-gpu2', 'a1-gpu3'], vcpu: 0, memoryGb: 0, diskGb: 0 },
    ];
    expect(freeGpusByType(hosts, allocs)).toEqual(new Map([[H100, 13], [A100, 0]]));
    expect(freeGpusByType(hosts, allocs, { cloud: 'SECURE' }).get(H100)).toBe(5);
    expect(freeGpusByDataCenter(hosts, allocs).get('EU-RO-1')?.get(H100)).toBe(8);
    expect(availableGpuCounts(hosts, allocs, H100, { cloud: 'SECURE' })).toEqual([1, 2, 3, 4, 5]);
    expect(availableGpuCounts(hosts, allocs, A100)).toEqual([]);
    expect(stockByType(hosts, allocs).get(H100)).toEqual({ typeId: H100, free: 13, stockStatus: 'Medium', maxPlaceable: 8 });
  });
});
