// Stock: how many GPUs are free, by type and data center, as the catalog and `gpuTypes.lowestPrice`
// report it. Only hosts that accept new pods count (READY, not drained), and only GPUs not in FAILURE:
// stock promises placeability (a WARNING GPU is placeable and counts, docs/gpu-health.md).
// Pure functions over hosts + allocations; O(GPUs + allocations), cheap enough per catalog request.
import type { CloudTier, HostRecord } from '../model/index.ts';
import type { Allocation } from './placement.ts';

export type StockStatus = 'High' | 'Medium' | 'Low' | 'None';

/** Thresholds on free GPUs of a type (in the scope asked about). Low = "very few" in the public wording. */
export const STOCK_THRESHOLDS = Object.freeze({ High: 16, Medium: 4, Low: 1 });

export function stockStatus(freeGpus: number): StockStatus {
  if (freeGpus >= STOCK_THRESHOLDS.High) return 'High';
  if (freeGpus >= STOCK_THRESHOLDS.Medium) return 'Medium';
  if (freeGpus >= STOCK_THRESHOLDS.Low) return 'Low';
  return 'None';
}

export interface StockScope {
  cloud?: CloudTier | 'ALL';
  dataCenterId?: string;
}

interface HostFree {
  host: HostRecord;
  /** typeId → free GPUs of that type on this host */
  free: Map<string, number>;
}

/** Free GPUs per type on each host that accepts pods and is in scope. */
function freePerHost(hosts: readonly HostRecord[], allocations: readonly Allocation[], scope: StockScope): HostFree[] {
  const taken = new Set<string>();
  for (const a of allocations) for (const u of a.gpuUuids) taken.add(u);
  const out: HostFree[] = [];
  for (const host of hosts) {
    if (host.status !== 'READY' || host.drained) continue;
    if (scope.cloud !== undefined && scope.cloud !== 'ALL' && host.cloud !== scope.cloud) continue;
    if (scope.dataCenterId !== undefined && host.dataCenterId !== scope.dataCenterId) continue;
    const free = new Map<string, number>();
    for (const g of host.facts.gpus) {
      if (g.typeId === null) continue;
      // a GPU in FAILURE is in no stock: it takes no pod until it returns (docs/gpu-health.md)
      free.set(g.typeId, (free.get(g.typeId) ?? 0) + (taken.has(g.uuid) || g.health === 'FAILURE' ? 0 : 1));
    }
    out.push({ host, free });
  }
  return out;
}

/** typeId → free GPUs in scope. Types present in scope but fully taken appear with 0. */
export function freeGpusByType(
  hosts: readonly HostRecord[],
  allocations: readonly Allocation[],
  scope: StockScope = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const { free } of freePerHost(hosts, allocations, scope)) {
    for (const [t, n] of free) out.set(t, (out.get(t) ?? 0) + n);
  }
  return out;
}

/** dataCenterId → typeId → free GPUs (for `dataCenters { gpuAvailability }` and catalog availability). */
export function freeGpusByDataCenter(
  hosts: readonly HostRecord[],
  allocations: readonly Allocation[],
  scope: Omit<StockScope, 'dataCenterId'> = {},
): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const { host, free } of freePerHost(hosts, allocations, scope)) {
    let dc = out.get(host.dataCenterId);
    if (!dc) out.set(host.dataCenterId, (dc = new Map()));
    for (const [t, n] of free) dc.set(t, (dc.get(t) ?? 0) + n);
  }
  return out;
}

/**
 * GPU counts one pod could get right now: 1..(most free GPUs of the type on a single host), since a pod's
 * GPUs all come from one host. [] when none is free. Matches `lowestPrice { availableGpuCounts }`.
 */
export function availableGpuCounts(
  hosts: readonly HostRecord[],
  allocations: readonly Allocation[],
  typeId: string,
  scope: StockScope = {},
): number[] {
  let most = 0;
  for (const { free } of freePerHost(hosts, allocations, scope)) most = Math.max(most, free.get(typeId) ?? 0);
  return Array.from({ length: most }, (_, i) => i + 1);
}

export interface GpuTypeStock {
  typeId: string;
  free: number;
  stockStatus: StockStatus;
  /** most free on one host: the largest single pod that fits now */
  maxPlaceable: number;
}

/** One pass for a catalog listing: free count, status and largest placeable pod per type in scope. */
export function stockByType(
  hosts: readonly HostRecord[],
  allocations: readonly Allocation[],
  scope: StockScope = {},
): Map<string, GpuTypeStock> {
  const out = new Map<string, GpuTypeStock>();
  for (const { free } of freePerHost(hosts, allocations, scope)) {
    for (const [typeId, n] of free) {
      const s = out.get(typeId) ?? { typeId, free: 0, stockStatus: 'None' as StockStatus, maxPlaceable: 0 };
      s.free += n;
      s.maxPlaceable = Math.max(s.maxPlaceable, n);
      out.set(typeId, s);
    }
  }
  for (const s of out.values()) s.stockStatus = stockStatus(s.free);
  return out;
}
