// The Placer backed by the fleet scheduler. The scheduler's in-memory index follows the store: every
// change to a host or a pod marks it dirty with the version written, and the next placement folds
// those in first. It follows what transactions see (onStage: a write is visible to the next
// transaction before it is durable, and is taken back if its write fails), so with transactions
// running one at a time the index is exact when `place` runs.
import { Scheduler, placementError, type PlacementRequest as FleetRequest } from '../../fleet/index.ts';
import { priceFor, type PriceBook } from '../../fleet/index.ts';
import { cpuPricePerHour } from '../../fleet/index.ts';
import { allocationOf, podDiskGb, sameAllocation } from '../../fleet/index.ts';
import type { HostRecord, PodRecord } from '../../model/index.ts';
import type { Store, StoreReader, StoreTx } from '../../store/index.ts';
import type { Placement, PodPlacementRequest, Placer } from './placer.ts';

export class FleetPlacer implements Placer {
  /** changed ids and the version written (null: deleted; undefined: not told, read it) */
  private readonly dirtyHosts = new Map<string, HostRecord | null | undefined>();
  private readonly dirtyPods = new Map<string, PodRecord | null | undefined>();

  private constructor(
    readonly scheduler: Scheduler,
    private readonly prices: PriceBook,
  ) {}

  static async create(store: Store, prices: PriceBook): Promise<FleetPlacer> {
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
    placer = new FleetPlacer(scheduler, prices);
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

  async place(tx: StoreTx, req: PodPlacementRequest): Promise<Placement> {
    await this.refresh(tx);
    const { pod } = req;
    // a GPU pod keeps what it reserved when it was first placed (a later start has no minimums of its own)
    const minVcpu = req.minVcpu ?? (pod.gpu ? pod.reservedVcpu : 0);
    const minMemoryGb = req.minMemoryGb ?? (pod.gpu ? pod.reservedMemoryGb : 0);
    const request: FleetRequest = {
      cloud: req.cloud ?? pod.cloud,
      diskGb: podDiskGb(pod),
      ...(pod.gpu ? { gpu: { typeIds: req.gpuTypeIds?.length ? req.gpuTypeIds : [pod.gpu.id], count: pod.gpu.count } } : {}),
      ...(pod.cpu ? { cpu: { flavorId: pod.cpu.id, vcpuCount: pod.cpu.vcpuCount, memoryGb: pod.cpu.memory } } : {}),
      ...(req.dataCenterIds.length ? { dataCenterIds: req.dataCenterIds } : {}),
      ...(pod.allowedCudaVersions.length ? { allowedCudaVersions: pod.allowedCudaVersions } : {}),
      ...(req.pinnedHostId ? { pinnedHostId: req.pinnedHostId } : {}),
      ...(minVcpu ? { minVcpu } : {}),
      ...(minMemoryGb ? { minMemoryGb } : {}),
    };
    const res = this.scheduler.find(request);
    if (!res.ok) throw placementError(res);
    const host = await tx.get('hosts', res.hostId);
    const cloud = host?.cloud ?? pod.cloud;
    const costPerHr = pod.gpu
      ? round(priceFor(res.gpuTypeId ?? pod.gpu.id, cloud, this.prices) * pod.gpu.count)
      : (cpuPricePerHour(pod.cpu!.id, pod.cpu!.vcpuCount) ?? 0);
    return {
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
