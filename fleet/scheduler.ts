// Pod placement: pure and fast. A Scheduler holds the hosts and the live allocations as an index that is
// updated incrementally, so a placement never rescans the allocation list:
//   - per GPU type, READY hosts are bucketed by how many GPUs of that type they have free; a GPU request
//     walks buckets upward from its count, so the first bucket with a fitting host is the best fit (the
//     host left with the fewest free GPUs, keeping whole hosts free for big requests);
//   - ties break on fewest free GPUs overall, then host id, so the same state always gives the same answer
//     (the stateless `placeOnce` and a long-lived Scheduler agree, which the property test checks);
//   - CPU pods take the fullest fitting host without GPUs, and only then the fullest fitting GPU host.
// Only when nothing fits does `diagnosePlacement` scan everything to say why (impossible vs busy).
import { GpufleetError } from '../model/index.ts';
import type { HostRecord } from '../model/index.ts';
import { busyDiagnosis, hostExclusions, staticFit, type StaticMemo } from './placement-diagnosis.ts';
import { HOST_IDS_SHOWN, type PlacementPlan, type PlannedPlacement, type PlanRequest } from './placement-plan.ts';
import { fits, preference, SortedHosts } from './sorted-hosts.ts';
import { findPreemption, type Preemption } from './preemption.ts';
import {
  type Allocation,
  type CompiledRequest,
  type GpuSlot,
  type HostState,
  type PlacementFailure,
  type PlacementRequest,
  type PlacementResult,
  compileRequest,
  cudaKey,
  hasFreeCpuMemory,
  roomOk,
  FAILED_GPU,
} from './placement.ts';

export * from './placement.ts';

type Choice = { h: HostState; typeId: string | null; slots: GpuSlot[] };

/** a request for nothing: `roomOk` with it asks whether a host's recorded pods fit it at all */
const NOTHING = compileRequest({ cloud: 'ALL', diskGb: 0 });


export class Scheduler {
  private readonly states = new Map<string, HostState>();
  private readonly allocs = new Map<string, Allocation>();
  /** hostId → pod ids, kept even while the host is unknown so a re-enrolled host gets its pods back */
  private readonly podsByHost = new Map<string, Set<string>>();
  /** typeId → buckets[freeCount] of schedulable hosts, each in preference order (sorted-hosts.ts) */
  private readonly buckets = new Map<string, SortedHosts[]>();
  /** schedulable hosts in preference order, split so CPU pods try GPU-less hosts first */
  private readonly cpuOnly = new SortedHosts();
  private readonly withGpus = new Set<HostState>();
  /** every host, and per GPU type the hosts that have one: what a failed placement's diagnosis reads */
  private byType: Map<string, HostState[]> | null = null;
  /** the union of several types' lists, per `typeIds` joined */
  private readonly byTypes = new Map<string, HostState[]>();
  /** what hosts could run a request were they empty, per prefix of its static shape (staticFit), while hosts do not change */
  private readonly staticMemo: StaticMemo = new Map();
  private everyHost: HostState[] | null = null;
  /** how many recorded allocations are interruptible (have a bid): preemption is looked for only when some are */
  private interruptible = 0;

  constructor(hosts: readonly HostRecord[] = [], allocations: readonly Allocation[] = []) {
    // Allocations first: each host is then built with its pods applied and indexed once, not per pod.
    for (const a of allocations) this.record(a);
    for (const h of hosts) this.upsertHost(h);
  }

  /** Add or replace a host (new facts, status, drain flag); allocations on it are kept. */
  upsertHost(host: HostRecord): void {
    const old = this.states.get(host.id);
    if (old) this.unindex(old);
    const slots: GpuSlot[] = [];
    const typeTotal = new Map<string, number>();
    let sorted = true;
    let failed = 0;
    const typeFree = new Map<string, number>();
    for (const g of host.facts.gpus) {
      if (slots.length > 0 && slots[slots.length - 1]!.index > g.index) sorted = false;
      // a GPU in FAILURE is held by no pod and free for none (docs/gpu-health.md); WARNING stays schedulable
      const down = g.health === 'FAILURE';
      slots.push({ uuid: g.uuid, index: g.index, typeId: g.typeId, podId: down ? FAILED_GPU : null });
      if (down) failed++;
      if (g.typeId !== null) {
        typeTotal.set(g.typeId, (typeTotal.get(g.typeId) ?? 0) + 1);
        typeFree.set(g.typeId, (typeFree.get(g.typeId) ?? 0) + (down ? 0 : 1));
      }
    }
    if (!sorted) slots.sort((a, b) => a.index - b.index);
    const h: HostState = {
      host,
      schedulable: host.status === 'READY' && !host.drained,
      cudaKey: cudaKey(host.facts.cudaVersion),
      slots,
      typeTotal,
      typeFree,
      freeGpus: slots.length - failed,
      freeVcpu: host.facts.cpuCount,
      freeMemGb: host.facts.memoryGb,
      freeDiskGb: host.facts.diskFreeGb,
      pods: new Set(),
    };
    this.states.set(host.id, h);
    this.hostsChanged();
    for (const podId of this.podsByHost.get(host.id) ?? []) {
      const a = this.allocs.get(podId);
      if (a) this.apply(h, a);
    }
    this.index(h);
  }

  /** Forget a host. Its pods' allocations stay recorded (they are released by pod id as usual). */
  removeHost(hostId: string): void {
    const h = this.states.get(hostId);
    if (!h) return;
    this.unindex(h);
    this.states.delete(hostId);
    this.hostsChanged();
  }

  /** Record an existing allocation (control-plane restart). On a GPU claimed twice, the first claim wins. */
  record(a: Allocation): void {
    this.recordOwned({ ...a, gpuUuids: [...a.gpuUuids] });
  }

  /** `record` of an allocation nobody else holds (no copy: the hot path of `place`). */
  private recordOwned(a: Allocation): void {
    if (this.allocs.has(a.podId)) this.release(a.podId);
    this.allocs.set(a.podId, a);
    if (a.bid !== undefined) this.interruptible++;
    let onHost = this.podsByHost.get(a.hostId);
    if (!onHost) this.podsByHost.set(a.hostId, (onHost = new Set()));
    onHost.add(a.podId);
    const h = this.states.get(a.hostId);
    if (!h) return;
    this.unindex(h);
    this.apply(h, a);
    this.index(h);
  }

  /** Choose a host without recording anything. */
  find(request: PlacementRequest): PlacementResult {
    return this.findCompiled(compileRequest(request));
  }

  /** Choose a host and record the allocation under `podId`. */
  place(request: PlacementRequest, podId: string): PlacementResult {
    if (this.allocs.has(podId)) {
      throw new GpufleetError('CONFLICT', `pod ${podId} already holds an allocation; release it first`, { fields: { podId } });
    }
    const c = compileRequest(request);
    const res = this.findCompiled(c);
    // the allocation's own array: the caller's result keeps gpuUuids of its own
    if (res.ok) this.recordOwned({ podId, hostId: res.hostId, gpuUuids: [...res.gpuUuids], vcpu: c.vcpu, memoryGb: c.memGb, diskGb: c.diskGb });
    return res;
  }

  /**
   * A plan for `requests` from this index as it is now (docs/placement.md), records nothing: each
   * request sees the ones before it placed. A refusal carries the diagnosis and every host's excluding
   * constraint; placements cost what `find` costs.
   */
  plan(requests: readonly PlanRequest[]): PlacementPlan {
    const plan: PlacementPlan = { placements: [], evictions: [], refusals: [] };
    const held: string[] = [];
    /** victims of earlier requests in this plan, taken out of the index until the plan is answered */
    const evicted: Allocation[] = [];
    try {
      for (let i = 0; i < requests.length; i++) {
        const { podId, request } = requests[i]!;
        const c = compileRequest(request);
        let res = this.findCompiled(c);
        let preemption: Preemption | null = null;
        // only a request nothing free can take looks for interruptible pods to take GPUs from (preemption.ts)
        if (!res.ok && res.reason === 'busy' && this.interruptible > 0 && c.req.preemptBelow !== undefined) {
          preemption = findPreemption(this.diagnosisHosts(c), c, (id) => this.allocs.get(id));
          if (preemption) res = { ok: true, hostId: preemption.h.host.id, dataCenterId: preemption.h.host.dataCenterId, gpuUuids: preemption.slots.map((s) => s.uuid), gpuTypeId: preemption.typeId };
        }
        if (!res.ok) {
          plan.refusals.push({ podId, failure: res, hosts: hostExclusions([...this.states.values()], c, res, HOST_IDS_SHOWN) });
          continue;
        }
        const p: PlannedPlacement = {
          podId,
          hostId: res.hostId,
          dataCenterId: res.dataCenterId,
          gpuUuids: res.gpuUuids,
          gpuTypeId: res.gpuTypeId,
          vcpu: c.vcpu,
          memoryGb: c.memGb,
          diskGb: c.diskGb,
        };
        plan.placements.push(p);
        for (const v of preemption?.victims ?? []) {
          plan.evictions.push({ podId: v.podId, hostId: v.hostId, forPodId: podId, bidPerGpu: v.bid!, reason: 'preempted' });
          if (i < requests.length - 1) {
            evicted.push(v);
            this.release(v.podId);
          }
        }
        // the requests after this one see it placed; taken back before returning
        if (i < requests.length - 1 && !this.allocs.has(podId)) {
          this.record(p);
          held.push(podId);
        }
      }
    } finally {
      for (const id of held) this.release(id);
      for (const v of evicted) this.recordOwned(v);
    }
    return plan;
  }

  /**
   * What a GPU request would have to outbid to be placed now (docs/teams.md): 0 when it fits without
   * taking anything, the highest bid among the interruptible pods the best preemption takes
   * (preemption.ts) when it fits only that way, null when no interruptible pods could make room.
   */
  outbid(request: PlacementRequest): number | null {
    const c = compileRequest({ ...request, preemptBelow: Infinity });
    const res = this.findCompiled(c);
    if (res.ok) return 0;
    if (res.reason !== 'busy' || this.interruptible === 0) return null;
    return findPreemption(this.diagnosisHosts(c), c, (id) => this.allocs.get(id))?.maxBid ?? null;
  }

  private findCompiled(c: CompiledRequest): PlacementResult {
    const choice = this.choose(c);
    if (!choice) return this.diagnose(c);
    return {
      ok: true,
      hostId: choice.h.host.id,
      dataCenterId: choice.h.host.dataCenterId,
      gpuUuids: choice.slots.map((s) => s.uuid),
      gpuTypeId: choice.typeId,
    };
  }

  /** Free a pod's resources; false when it held none. */
  release(podId: string): boolean {
    const a = this.allocs.get(podId);
    if (!a) return false;
    this.allocs.delete(podId);
    if (a.bid !== undefined) this.interruptible--;
    const onHost = this.podsByHost.get(a.hostId);
    onHost?.delete(podId);
    if (onHost?.size === 0) this.podsByHost.delete(a.hostId);
    const h = this.states.get(a.hostId);
    if (h && h.pods.has(podId)) {
      this.unindex(h);
      h.pods.delete(podId);
      for (const s of h.slots) {
        if (s.podId !== podId) continue;
        s.podId = null;
        h.freeGpus++;
        if (s.typeId !== null) h.typeFree.set(s.typeId, (h.typeFree.get(s.typeId) ?? 0) + 1);
      }
      h.freeVcpu += a.vcpu;
      h.freeMemGb += a.memoryGb;
      h.freeDiskGb += a.diskGb;
      this.index(h);
    }
    return true;
  }

  /**
   * Whether the pods recorded on a host take more vCPU or memory ('cpu-memory') or disk ('disk') than it
   * has; null when they fit (or the host is unknown). `roomOk`'s rule, for the host's whole load.
   */
  overcommit(hostId: string): 'cpu-memory' | 'disk' | null {
    const h = this.states.get(hostId);
    if (!h || roomOk(h, NOTHING)) return null;
    return hasFreeCpuMemory(h, NOTHING) ? 'disk' : 'cpu-memory';
  }

  /** the pods recorded on a host */
  podsOn(hostId: string): string[] {
    return [...(this.podsByHost.get(hostId) ?? [])];
  }

  allocation(podId: string): Allocation | null {
    return this.allocs.get(podId) ?? null;
  }

  allocations(): Allocation[] {
    return [...this.allocs.values()];
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** Why nothing fits: the static part kept per request prefix while hosts are unchanged, the rest from now. */
  private diagnose(c: CompiledRequest): PlacementFailure {
    const fit = staticFit(this.diagnosisHosts(c), c, this.staticMemo);
    return fit.failure ?? busyDiagnosis(fit.hosts, c);
  }

  private hostsChanged(): void {
    this.byType = null;
    this.byTypes.clear();
    this.staticMemo.clear();
    this.everyHost = null;
  }

  /**
   * The hosts a diagnosis must look at. Its first stage keeps only hosts with one of a GPU request's
   * types, so an unpinned GPU request is diagnosed over those alone (the same answer, without visiting
   * the rest of the fleet); anything else over every host.
   */
  private diagnosisHosts(c: CompiledRequest): readonly HostState[] {
    this.everyHost ??= [...this.states.values()];
    if (c.count === 0 || c.req.pinnedHostId !== undefined || this.everyHost.length === 0) return this.everyHost;
    if (!this.byType) {
      this.byType = new Map();
      for (const h of this.everyHost) {
        for (const t of h.typeTotal.keys()) {
          let list = this.byType.get(t);
          if (!list) this.byType.set(t, (list = []));
          list.push(h);
        }
      }
    }
    const lists = c.typeIds.map((t) => this.byType!.get(t) ?? []).filter((l) => l.length > 0);
    if (lists.length === 0) return this.everyHost; // no host of any type asked for: the first stage says so
    if (lists.length === 1) return lists[0]!;
    const key = c.typeIds.join('\n');
    let union = this.byTypes.get(key);
    if (!union) this.byTypes.set(key, (union = [...new Set(lists.flat())]));
    return union;
  }

  private choose(c: CompiledRequest): Choice | null {
    if (!c.flavorKnown) return null;
    const pinned = c.req.pinnedHostId === undefined ? null : this.states.get(c.req.pinnedHostId);
    if (c.req.pinnedHostId !== undefined && (!pinned || !pinned.schedulable || !fits(pinned, c))) return null;
    if (c.count > 0) {
      for (const typeId of c.typeIds) {
        let best: HostState | null = null;
        if (pinned) {
          if ((pinned.typeFree.get(typeId) ?? 0) >= c.count) best = pinned;
        } else {
          const bs = this.buckets.get(typeId);
          for (let k = c.count; bs && k < bs.length && !best; k++) best = bs[k]!.first(c);
        }
        if (best) {
          const slots: GpuSlot[] = [];
          for (const s of best.slots) {
            if (s.podId === null && s.typeId === typeId) slots.push(s);
            if (slots.length === c.count) break;
          }
          return { h: best, typeId, slots };
        }
      }
      return null;
    }
    if (pinned) return { h: pinned, typeId: null, slots: [] };
    let best = this.cpuOnly.first(c);
    // GPU hosts take CPU pods only when no GPU-less host can: scanned whole then, not kept in order
    if (!best) for (const h of this.withGpus) if (fits(h, c) && (best === null || preference(h, best) < 0)) best = h;
    return best ? { h: best, typeId: null, slots: [] } : null;
  }

  /** Subtract an allocation from a host; GPUs that are gone or already claimed are skipped. */
  private apply(h: HostState, a: Allocation): void {
    h.pods.add(a.podId);
    // a pod holds a host's handful of GPUs at most: a scan, no Set per allocation
    for (const s of h.slots) {
      if (s.podId !== null || !a.gpuUuids.includes(s.uuid)) continue;
      s.podId = a.podId;
      h.freeGpus--;
      if (s.typeId !== null) h.typeFree.set(s.typeId, (h.typeFree.get(s.typeId) ?? 0) - 1);
    }
    h.freeVcpu -= a.vcpu;
    h.freeMemGb -= a.memoryGb;
    h.freeDiskGb -= a.diskGb;
  }

  private index(h: HostState): void {
    if (!h.schedulable) return;
    for (const [typeId, total] of h.typeTotal) {
      let bs = this.buckets.get(typeId);
      if (!bs) this.buckets.set(typeId, (bs = []));
      while (bs.length <= total) bs.push(new SortedHosts());
      bs[h.typeFree.get(typeId) ?? 0]!.add(h);
    }
    (h.slots.length === 0 ? this.cpuOnly : this.withGpus).add(h);
  }

  /** Before the host's free counts change: its place in each sorted list is found by them. */
  private unindex(h: HostState): void {
    if (!h.schedulable) return;
    for (const typeId of h.typeTotal.keys()) this.buckets.get(typeId)?.[h.typeFree.get(typeId) ?? 0]?.delete(h);
    (h.slots.length === 0 ? this.cpuOnly : this.withGpus).delete(h);
  }
}

/** Stateless placement: index the given state, choose, record nothing. */
export function placeOnce(
  hosts: readonly HostRecord[],
  allocations: readonly Allocation[],
  request: PlacementRequest,
): PlacementResult {
  return new Scheduler(hosts, allocations).find(request);
}
