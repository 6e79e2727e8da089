// GPU types, data centers and CPU flavors as the fleet really has them: types come from enrolled
// hosts' GPUs, stock from the GPUs no pod holds (fleet/stock.ts has the thresholds).
import { GPU_CATALOG, gpuTypeById, priceFor, type GpuTypeEntry, type PriceBook } from '../../fleet/index.ts';
import { listCpuFlavors } from '../../fleet/index.ts';
import { availableGpuCounts, freeGpusByDataCenter, stockByType, stockStatus, type StockStatus } from '../../fleet/index.ts';
import type { CloudTier, HostRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { FleetPlacer } from './fleet-placer.ts';

export interface GpuTypeInfo {
  entry: GpuTypeEntry;
  secure: boolean;
  community: boolean;
  /** most GPUs of this type on one host, per tier */
  maxCount: Record<CloudTier, number>;
  free: number;
  stockStatus: StockStatus;
  price: Record<CloudTier, number>;
  /** the lowest bid an interruptible pod of this type may make, per tier (prices.json `spotFloor`) */
  spotFloor: Record<CloudTier, number>;
  dataCenters: string[];
}

export interface DataCenterInfo {
  id: string;
  name: string;
  hosts: number;
  /** in the global network (pods there may have globalNetworking); GPUFLEET_GLOBAL_NETWORK_EXCLUDE takes a data center out */
  globalNetwork: boolean;
  gpuAvailability: { gpuTypeId: string; displayName: string; free: number; stockStatus: StockStatus }[];
}

export class OfferService {
  constructor(
    private readonly store: Store,
    private readonly placer: FleetPlacer,
    private readonly prices: PriceBook,
    /** GPUFLEET_GLOBAL_NETWORK_EXCLUDE */
    private readonly outsideGlobalNetwork: readonly string[] = [],
  ) {}

  private async fleet(): Promise<{ hosts: HostRecord[]; allocations: ReturnType<FleetPlacer['scheduler']['allocations']> }> {
    const scheduler = await this.placer.refresh(this.store);
    return { hosts: await this.store.list('hosts'), allocations: scheduler.allocations() };
  }

  async gpuTypes(scope: { cloud?: CloudTier | 'ALL'; dataCenterId?: string } = {}): Promise<GpuTypeInfo[]> {
    const { hosts, allocations } = await this.fleet();
    const stock = stockByType(hosts, allocations, scope);
    const infos = new Map<string, GpuTypeInfo>();
    for (const h of hosts) {
      for (const g of h.facts.gpus) {
        const entry = g.typeId ? gpuTypeById(g.typeId) : null;
        if (!entry) continue;
        let info = infos.get(entry.id);
        if (!info) {
          const s = stock.get(entry.id);
          info = {
            entry,
            secure: false,
            community: false,
            maxCount: { SECURE: 0, COMMUNITY: 0 },
            free: s?.free ?? 0,
            stockStatus: s?.stockStatus ?? 'None',
            price: { SECURE: priceFor(entry.id, 'SECURE', this.prices), COMMUNITY: priceFor(entry.id, 'COMMUNITY', this.prices) },
            spotFloor: { SECURE: this.prices.spotFloor(entry.id, 'SECURE'), COMMUNITY: this.prices.spotFloor(entry.id, 'COMMUNITY') },
            dataCenters: [],
          };
          infos.set(entry.id, info);
        }
        if (h.cloud === 'SECURE') info.secure = true;
        else info.community = true;
        const onHost = h.facts.gpus.filter((x) => x.typeId === entry.id).length;
        info.maxCount[h.cloud] = Math.max(info.maxCount[h.cloud], onHost);
        if (!info.dataCenters.includes(h.dataCenterId)) info.dataCenters.push(h.dataCenterId);
      }
    }
    const order = new Map(GPU_CATALOG.map((e, i) => [e.id, i]));
    return [...infos.values()].sort((a, b) => (order.get(a.entry.id) ?? 0) - (order.get(b.entry.id) ?? 0));
  }

  async availableCounts(typeId: string, cloud: CloudTier | 'ALL' = 'ALL'): Promise<number[]> {
    const { hosts, allocations } = await this.fleet();
    return availableGpuCounts(hosts, allocations, typeId, { cloud });
  }

  async dataCenters(): Promise<DataCenterInfo[]> {
    const { hosts, allocations } = await this.fleet();
    const free = freeGpusByDataCenter(hosts, allocations);
    const ids = [...new Set(hosts.map((h) => h.dataCenterId))].sort();
    return ids.map((id) => ({
      id,
      name: id,
      hosts: hosts.filter((h) => h.dataCenterId === id).length,
      globalNetwork: !this.outsideGlobalNetwork.includes(id),
      gpuAvailability: [...(free.get(id) ?? new Map<string, number>())].map(([gpuTypeId, n]) => ({
        gpuTypeId,
        displayName: gpuTypeById(gpuTypeId)?.displayName ?? gpuTypeId,
        free: n,
        stockStatus: stockStatus(n),
      })),
    }));
  }

  cpuFlavors() {
    return listCpuFlavors();
  }
}
