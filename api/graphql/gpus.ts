// Catalog queries: gpuTypes (with lowestPrice), dataCenters, serverlessGpuPools, cpuFlavors. The
// types, prices and stock are OfferService's and fleet/stock.ts's, the same numbers REST reports.
import { GPU_POOL_IDS, gpuTypesInPool, poolMemoryFloorGb } from '../../fleet/index.ts';
import { listCpuFlavors } from '../../fleet/index.ts';
import type { Allocation, Scheduler } from '../../fleet/index.ts';
import { availableGpuCounts, stockByType, type StockScope } from '../../fleet/index.ts';
import type { CloudTier, HostRecord } from '../../model/index.ts';
import { fail422 } from '../../model/index.ts';
import type { GpuTypeInfo } from '../../core/index.ts';
import { memo, str, type GqlContext } from './context.ts';

interface GpuLowestPriceInput {
  gpuCount?: number | null;
  secureCloud?: boolean | null;
  dataCenterId?: string | null;
  minVcpuCount?: number | null;
  minMemoryInGb?: number | null;
  totalDisk?: number | null;
  minDisk?: number | null;
}

/** Hosts and allocations once per request: every type's lowestPrice reads the same snapshot. */
function fleet(ctx: GqlContext): Promise<{ hosts: HostRecord[]; allocations: Allocation[] }> {
  return memo(ctx, 'fleet', async () => {
    const scheduler = await ctx.services.placer.refresh(ctx.services.store);
    return { hosts: await ctx.services.store.list('hosts'), allocations: scheduler.allocations() };
  });
}

const inScope = (h: HostRecord, s: StockScope) =>
  h.status === 'READY' && !h.drained && (s.cloud === undefined || s.cloud === 'ALL' || h.cloud === s.cloud) && (s.dataCenterId === undefined || h.dataCenterId === s.dataCenterId);

/** The smallest share of vCPUs and memory a pod of `count` GPUs of this type gets on a host in scope. */
function minShares(hosts: HostRecord[], typeId: string, count: number, scope: StockScope): { minVcpu: number | null; minMemory: number | null } {
  let minVcpu: number | null = null;
  let minMemory: number | null = null;
  for (const h of hosts) {
    const total = h.facts.gpus.length;
    if (!inScope(h, scope) || h.facts.gpus.filter((g) => g.typeId === typeId).length < count) continue;
    const v = Math.floor((h.facts.cpuCount * count) / total);
    const m = Math.floor((h.facts.memoryGb * count) / total);
    minVcpu = minVcpu === null ? v : Math.min(minVcpu, v);
    minMemory = minMemory === null ? m : Math.min(minMemory, m);
  }
  return { minVcpu, minMemory };
}

/**
 * The lowest bid that places `count` GPUs of the type in `tier` now (docs/teams.md): the tier's spot
 * floor while they are free, else just above (one cent) the highest bid the best preemption would
 * take (fleet/preemption.ts); null when no bid would place them.
 */
function minimumBid(scheduler: Scheduler, t: GpuTypeInfo, tier: CloudTier, count: number, dc: string | undefined, input: GpuLowestPriceInput | null | undefined): number | null {
  const outbid = scheduler.outbid({
    gpu: { typeIds: [t.entry.id], count },
    cloud: tier,
    diskGb: input?.totalDisk ?? input?.minDisk ?? 0,
    ...(dc !== undefined ? { dataCenterIds: [dc] } : {}),
    ...(input?.minVcpuCount ? { minVcpu: input.minVcpuCount } : {}),
    ...(input?.minMemoryInGb ? { minMemoryGb: input.minMemoryInGb } : {}),
  });
  if (outbid === null) return null;
  if (outbid === 0) return t.spotFloor[tier];
  return Math.max(t.spotFloor[tier], Math.round((outbid + BID_STEP) * 10000) / 10000);
}

/** how far above the bids it would preempt the lowest winning bid is: one cent per GPU-hour */
const BID_STEP = 0.01;

async function lowestPrice(t: GpuTypeInfo, input: GpuLowestPriceInput | null | undefined, ctx: GqlContext) {
  const count = input?.gpuCount ?? 1;
  if (!Number.isInteger(count) || count < 1) fail422('lowestPrice input', ['$.input.gpuCount: must be >= 1']);
  const cloud: CloudTier | 'ALL' = input?.secureCloud === true ? 'SECURE' : input?.secureCloud === false ? 'COMMUNITY' : 'ALL';
  const dc = str(input?.dataCenterId);
  const scope: StockScope = dc === undefined ? { cloud } : { cloud, dataCenterId: dc };
  const { hosts, allocations } = await fleet(ctx);
  const stock = await memo(ctx, `stock:${cloud}:${dc ?? ''}`, async () => stockByType(hosts, allocations, scope));
  const s = stock.get(t.entry.id);
  const tiers = (cloud === 'ALL' ? (['SECURE', 'COMMUNITY'] as const) : [cloud]).filter((c) => (c === 'SECURE' ? t.secure : t.community));
  const scheduler = await ctx.services.placer.refresh(ctx.services.store);
  const bids = tiers
    .map((tier) => minimumBid(scheduler, t, tier, count, dc, input))
    .filter((b): b is number => b !== null);
  return {
    gpuTypeId: t.entry.id,
    gpuName: t.entry.displayName,
    uninterruptablePrice: tiers.length ? Math.min(...tiers.map((c) => t.price[c])) : null,
    minimumBidPrice: bids.length ? Math.min(...bids) : null,
    // stock for a pod of `count` GPUs: None when no single host has that many free
    stockStatus: s && s.maxPlaceable >= count ? s.stockStatus : 'None',
    availableGpuCounts: availableGpuCounts(hosts, allocations, t.entry.id, scope),
    maxUnreservedGpuCount: s?.free ?? 0,
    ...minShares(hosts, t.entry.id, count, scope),
    countryCode: null,
  };
}

export const gpuResolvers = {
  Query: {
    gpuTypes: async (_: unknown, { input }: { input?: { id?: string | null; ids?: string[] | null } | null }, ctx: GqlContext) => {
      const types = await ctx.services.offers.gpuTypes();
      const ids = [...(input?.ids ?? []), ...(input?.id ? [input.id] : [])];
      return ids.length ? types.filter((t) => ids.includes(t.entry.id)) : types;
    },
    dataCenters: async (_: unknown, _a: unknown, ctx: GqlContext) =>
      (await ctx.services.offers.dataCenters()).map((d) => ({
        id: d.id,
        name: d.name,
        // hosts carry a data center id and nothing about geography
        location: d.id,
        listed: true,
        storageSupport: true,
        globalNetwork: d.globalNetwork,
        gpuAvailability: d.gpuAvailability,
      })),
    serverlessGpuPools: () =>
      GPU_POOL_IDS.map((id) => ({ id, gpuTypeIds: gpuTypesInPool(id).map((t) => t.id), memoryInGb: poolMemoryFloorGb(id) })),
    cpuFlavors: () =>
      listCpuFlavors().map((f) => ({
        id: f.id,
        groupId: f.id,
        displayName: f.displayName,
        minVcpu: f.vcpuCounts[0] ?? 0,
        maxVcpu: f.vcpuCounts[f.vcpuCounts.length - 1] ?? 0,
        vcpuCounts: f.vcpuCounts,
        ramMultiplier: f.memoryPerVcpuGb,
        pricePerVcpuHour: f.pricePerVcpuHour,
      })),
  },
  GpuType: {
    id: (t: GpuTypeInfo) => t.entry.id,
    displayName: (t: GpuTypeInfo) => t.entry.displayName,
    manufacturer: (t: GpuTypeInfo) => t.entry.manufacturer,
    memoryInGb: (t: GpuTypeInfo) => t.entry.memoryInGb,
    cudaCores: (t: GpuTypeInfo) => t.entry.cudaCores,
    pool: (t: GpuTypeInfo) => t.entry.pool,
    secureCloud: (t: GpuTypeInfo) => t.secure,
    communityCloud: (t: GpuTypeInfo) => t.community,
    maxGpuCount: (t: GpuTypeInfo) => Math.max(t.maxCount.SECURE, t.maxCount.COMMUNITY),
    maxGpuCountSecureCloud: (t: GpuTypeInfo) => t.maxCount.SECURE,
    maxGpuCountCommunityCloud: (t: GpuTypeInfo) => t.maxCount.COMMUNITY,
    securePrice: (t: GpuTypeInfo) => (t.secure ? t.price.SECURE : null),
    communityPrice: (t: GpuTypeInfo) => (t.community ? t.price.COMMUNITY : null),
    // no commitment plans on this fleet
    oneWeekPrice: () => null,
    oneMonthPrice: () => null,
    threeMonthPrice: () => null,
    sixMonthPrice: () => null,
    // the spot floor for the tiers the fleet has this type in (docs/teams.md)
    secureSpotPrice: (t: GpuTypeInfo) => (t.secure ? t.spotFloor.SECURE : null),
    communitySpotPrice: (t: GpuTypeInfo) => (t.community ? t.spotFloor.COMMUNITY : null),
    lowestPrice: (t: GpuTypeInfo, { input }: { input?: GpuLowestPriceInput | null }, ctx: GqlContext) => lowestPrice(t, input, ctx),
  },
};
