// The Placer backed by the fleet scheduler, as plan then apply (docs/placement.md): the scheduler
// proposes a plan from its in-memory index, the plan is verified against the pod's transaction (every
// host it touches: GPUs held once, vCPU, memory, disk; fleet's verifyPlan), and only a verified plan
// is applied. A plan that went stale is planned again, a few times, after the index learns the hosts
// it was wrong about; on PostgreSQL the commit verifies it once more under the host's lock.
// The index follows the store: every change to a host or a pod marks it dirty with the version
// written, and the next plan folds those in first. It follows what transactions see (onStage: a write
// is visible to the next transaction before it is durable, and is taken back if its write fails).
import { Scheduler, placementError, verifyPlan, type PlacementPlan, type PlacementRequest as FleetRequest } from '../../fleet/index.ts';
import { priceFor, type PriceBook } from '../../fleet/index.ts';
import { cpuPricePerHour } from '../../fleet/index.ts';
import { allocationOf, podDiskGb, sameAllocation } from '../../fleet/index.ts';
import type { HostRecord, PodRecord } from '../../model/index.ts';
import type { Store, StoreReader, StoreTx } from '../../store/index.ts';
import { DEFAULT_PREEMPT_GRACE_S, GpufleetError, isInterruptible } from '../../model/index.ts';
import type { Placement, PodPlacementRequest, Placer } from './placer.ts';
import { bidTerms, noInstances, placedBid } from './bids.ts';
import { applyEvictions } from './evictions.ts';

/** how often a pod is planned again after its plan failed verification, before it is refused */
export const REPLANS = 3;

/** Told of each plan between planning and applying it, inside the pod's transaction (tracing; tests). */
export type PlanListener = (tx: StoreTx, plan: PlacementPlan) => Promise<void> | void;

export class FleetPlacer implements Placer {
  /** changed ids and the version written (null: deleted; undefined: not told, read it) */
  private readonly dirtyHosts = new Map<string, HostRecord | null | undefined>();
  private readonly dirtyPods = new Map<string, PodRecord | null | undefined>();
  private readonly planListeners = new Set<PlanListener>();

  private constructor(
    readonly scheduler: Scheduler,
    readonly prices: PriceBook,
    private readonly preemptGraceSeconds: number,
  ) {}

  static async create(store: Store, prices: PriceBook, opts: { preemptGraceSeconds?: number } = {}): Promise<FleetPlacer> {
    // following first, then reading: a change committed while the lists are read (another replica's,
    // on PostgreSQL) is folded in at the next placement rather than missed
    let placer: FleetPlacer | null = null;
    const early: [string, string, HostRecord | PodRecord | null | undefined][] = [];
    const follow = store.onStage ? store.onStage.bind(store) : store.onCommit.bind(store);
    follow((changes) => {
      for (const c of changes) {
        if (c.collection !== 'hosts' && c.collection !== 'pods') continue;
        const version = c.deleted ? null : c.record;
        if (!placer) early.push([c.collection, c.id, version]);
        else if (c.collection === 'hosts') placer.dirtyHosts.set(c.id, version as HostRecord | null | undefined);
        else placer.dirtyPods.set(c.id, version as PodRecord | null | undefined);
      }
    });
    const pods = await store.list('pods');
    const scheduler = new Scheduler(
      await store.list('hosts'),
      pods.map(allocationOf).filter((a) => a !== null),
    );
    placer = new FleetPlacer(scheduler, prices, opts.preemptGraceSeconds ?? DEFAULT_PREEMPT_GRACE_S);
    for (const [c, id, version] of early) {
      if (c === 'hosts') placer.dirtyHosts.set(id, version as HostRecord | null | undefined);
      else placer.dirtyPods.set(id, version as PodRecord | null | undefined);
    }
    return placer;
  }

  /** Folds committed host and pod changes into the scheduler's index. */
  async refresh(store: StoreReader): Promise<Scheduler> {
    for (const [id, version] of [...this.dirtyHosts]) {
      this.dirtyHosts.delete(id);
      const host = version === undefined ? await store.get('hosts', id) : version;
      if (host) this.scheduler.upsertHost(host);
      else this.scheduler.removeHost(id);
    }
    for (const [id, version] of [...this.dirtyPods]) {
      this.dirtyPods.delete(id);
      const pod = version === undefined ? await store.get('pods', id) : version;
      const a = pod ? allocationOf(pod) : null;
      const held = this.scheduler.allocation(id);
      if (held && a && sameAllocation(held, a)) continue;
      this.scheduler.release(id);
      if (a) this.scheduler.record(a);
    }
    return this.scheduler;
  }

  /** Hears every plan before it is verified and applied; answers the unsubscribe. */
  onPlan(listener: PlanListener): () => void {
    this.planListeners.add(listener);
    return () => this.planListeners.delete(listener);
  }

  /** Plans the pod, verifies the plan inside `tx`, and answers the verified placement (or refuses). */
  async place(tx: StoreTx, req: PodPlacementRequest): Promise<Placement> {
    const { pod } = req;
    // a GPU pod keeps what it reserved when it was first placed (a later start has no minimums of its own)
    const minVcpu = req.minVcpu ?? (pod.gpu ? pod.reservedVcpu : 0);
    const minMemoryGb = req.minMemoryGb ?? (pod.gpu ? pod.reservedMemoryGb : 0);
    // an interruptible pod's bid picks the tiers it reaches and what it may preempt (bids.ts)
    const bid = bidTerms(pod, req.cloud ?? pod.cloud, this.prices);
    const request: FleetRequest = {
      cloud: bid.cloud,
      diskGb: podDiskGb(pod),
      ...(pod.gpu ? { gpu: { typeIds: req.gpuTypeIds?.length ? req.gpuTypeIds : [pod.gpu.id], count: pod.gpu.count } } : {}),
      ...(pod.cpu ? { cpu: { flavorId: pod.cpu.id, vcpuCount: pod.cpu.vcpuCount, memoryGb: pod.cpu.memory } } : {}),
      ...(req.dataCenterIds.length ? { dataCenterIds: req.dataCenterIds } : {}),
      ...(pod.allowedCudaVersions.length ? { allowedCudaVersions: pod.allowedCudaVersions } : {}),
      ...(req.pinnedHostId ? { pinnedHostId: req.pinnedHostId } : {}),
      ...(req.avoidHostIds?.length ? { avoidHostIds: req.avoidHostIds } : {}),
      ...(minVcpu ? { minVcpu } : {}),
      ...(minMemoryGb ? { minMemoryGb } : {}),
      ...(bid.preemptBelow !== undefined ? { preemptBelow: bid.preemptBelow } : {}),
    };
    /** pods and hosts the index learned from this transaction's view: read again by the next refresh */
    const learned = { hosts: new Set<string>(), pods: new Set<string>() };
    try {
      for (let round = 0; ; round++) {
        await this.refresh(tx);
        const plan = this.planFreeing(req.replacing, pod.id, request);
        for (const listener of this.planListeners) await listener(tx, plan);
        const refusal = plan.refusals[0];
        // the public platform's words for a spot request that places nowhere at its bid
        if (refusal && isInterruptible(pod) && refusal.failure.reason === 'busy') throw noInstances({ hosts: refusal.hosts });
        if (refusal) throw placementError(refusal.failure, refusal.hosts);
        const conflicts = await verifyPlan(plan, {
          host: (id) => tx.get('hosts', id),
          placedPods: async (id) => (await tx.list('pods', { hostId: id })).filter((p) => p.allocated && p.id !== req.replacing),
        });
        if (conflicts.length === 0) {
          // a dry run only says what it would preempt: its transaction commits, so it must write nothing
          if (req.dryRun) return { ...(await this.placementOf(tx, pod, plan, minVcpu, minMemoryGb)), wouldPreempt: plan.evictions.length };
          // the pods it preempts stop in this transaction: the commit sees their GPUs released
          await applyEvictions(tx, plan, isInterruptible(pod) ? 'higher-bid' : 'on-demand', this.preemptGraceSeconds);
          return await this.placementOf(tx, pod, plan, minVcpu, minMemoryGb);
        }
        const first = conflicts[0]!;
        if (round >= REPLANS)
          throw new GpufleetError('CAPACITY_UNAVAILABLE', 'The hosts this request was planned on kept being filled by concurrent requests; none has room for it now.', {
            fields: { reason: 'busy', constraint: first.constraint, hostId: first.hostId, conflict: first.detail },
          });
        for (const c of conflicts) await this.learn(tx, c.hostId, learned);
      }
    } finally {
      // what was learned inside this transaction may be taken back with it: read it again next time
      for (const id of learned.hosts) this.dirtyHosts.set(id, undefined);
      for (const id of learned.pods) this.dirtyPods.set(id, undefined);
    }
  }

  /** The plan with `replacing`'s allocation taken out of the index for its length (and put back after). */
  private planFreeing(replacing: string | undefined, podId: string, request: FleetRequest): PlacementPlan {
    const held = replacing ? this.scheduler.allocation(replacing) : null;
    if (held) this.scheduler.release(replacing!);
    try {
      return this.scheduler.plan([{ podId, request }]);
    } finally {
      if (held) this.scheduler.record(held);
    }
  }

  /** A stale plan's host: the index takes the host and its pods as the transaction sees them now. */
  private async learn(tx: StoreTx, hostId: string, learned: { hosts: Set<string>; pods: Set<string> }): Promise<void> {
    learned.hosts.add(hostId);
    this.dirtyHosts.set(hostId, undefined);
    for (const id of this.scheduler.podsOn(hostId)) {
      learned.pods.add(id);
      this.dirtyPods.set(id, undefined);
    }
    for (const p of await tx.list('pods', { hostId })) {
      learned.pods.add(p.id);
      this.dirtyPods.set(p.id, p);
    }
  }

  private async placementOf(tx: StoreTx, pod: PodRecord, plan: PlacementPlan, minVcpu: number | undefined, minMemoryGb: number | undefined): Promise<Placement> {
    const res = plan.placements[0]!;
    const host = await tx.get('hosts', res.hostId);
    const cloud = host?.cloud ?? pod.cloud;
    const typeId = res.gpuTypeId ?? pod.gpu?.id;
    // an interruptible pod pays its bid (docs/teams.md); on-demand pods the tier's price
    const bidPerGpu = pod.gpu ? placedBid(pod, typeId!, cloud, this.prices) : undefined;
    const costPerHr = pod.gpu
      ? round((bidPerGpu ?? priceFor(typeId!, cloud, this.prices)) * pod.gpu.count)
      : (cpuPricePerHour(pod.cpu!.id, pod.cpu!.vcpuCount) ?? 0);
    return {
      ...(bidPerGpu !== undefined ? { bidPerGpu } : {}),
      hostId: res.hostId,
      dataCenterId: res.dataCenterId,
      gpuUuids: res.gpuUuids,
      cloud,
      costPerHr,
      cudaVersion: host?.facts.cudaVersion ?? null,
      reservedVcpu: pod.gpu ? (minVcpu ?? 0) : 0,
      reservedMemoryGb: pod.gpu ? (minMemoryGb ?? 0) : 0,
    };
  }
}

const round = (n: number) => Math.round(n * 10000) / 10000;
