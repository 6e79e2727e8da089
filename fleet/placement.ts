// Placement vocabulary shared by the scheduler and its failure diagnosis: the request, the result, the
// per-host index entry, and the host predicates. Kept apart so the hot path (scheduler.ts) and the slow
// "why not?" path (placement-diagnosis.ts) test a host with the very same code.
import { GpufleetError } from '../model/index.ts';
import type { CloudTier, HostRecord } from '../model/index.ts';
import { cpuFlavorById } from './cpu-catalog.ts';

export interface Allocation {
  podId: string;
  hostId: string;
  gpuUuids: string[];
  vcpu: number;
  memoryGb: number;
  diskGb: number;
  /** an interruptible pod's bid (USD per GPU-hour): what may preempt it (preemption.ts); absent: on-demand */
  bid?: number;
  /** when an interruptible pod started (ms since the epoch): among equal bids the most recent goes first */
  startedAtMs?: number;
}

export interface PlacementRequest {
  /** GPU pods: acceptable types in priority order (the first type that fits now wins) and the count */
  gpu?: { typeIds: string[]; count: number };
  /** CPU pods: a catalog flavor and its shape; the pod reserves vcpuCount and memoryGb */
  cpu?: { flavorId: string; vcpuCount: number; memoryGb: number };
  cloud: CloudTier | 'ALL';
  dataCenterIds?: string[];
  /** the host's CUDA version (what its driver supports) must equal one of these, compared as major.minor */
  allowedCudaVersions?: string[];
  /** the host's CUDA version must be at least this */
  minCudaVersion?: string;
  /** vCPUs / memory a GPU pod reserves on its host (0 when absent); for CPU pods a floor over `cpu` */
  minVcpu?: number;
  minMemoryGb?: number;
  diskGb: number;
  /** resume on this host only (pods with host-local storage) */
  pinnedHostId?: string;
  /** never these hosts (a pod moving off a host with a failed GPU; docs/gpu-health.md "Acting on it") */
  avoidHostIds?: string[];
  /**
   * when nothing is free, the request may take GPUs from interruptible pods bidding less than this
   * (Infinity for on-demand pods, the bid for an interruptible one; absent: never preempts)
   */
  preemptBelow?: number;
}

export type PlacementConstraint =
  | 'no-hosts'
  | 'pinned-host'
  | 'gpu-type'
  | 'gpu-count'
  | 'cloud'
  | 'data-center'
  | 'cuda-version'
  | 'cpu-flavor'
  | 'cpu-memory'
  | 'disk'
  | 'host-status';

export type PlacementSuccess = {
  ok: true;
  hostId: string;
  dataCenterId: string;
  gpuUuids: string[];
  /** null for CPU pods */
  gpuTypeId: string | null;
};
export type PlacementFailure = {
  ok: false;
  /** impossible: no host could ever run it, even empty; busy: it would fit, but capacity is taken now */
  reason: 'impossible' | 'busy';
  constraint: PlacementConstraint;
  detail: string;
};
export type PlacementResult = PlacementSuccess | PlacementFailure;

/**
 * The registry error for a failed placement: PLACEMENT_IMPOSSIBLE or CAPACITY_UNAVAILABLE; a plan's
 * refusal adds which constraint excluded which hosts as the structured field `hosts` (for logs and
 * callers in process: the problem+json body carries the detail, not the fields).
 */
export function placementError(f: PlacementFailure, hosts?: readonly { constraint: PlacementConstraint; hostCount: number; hostIds: string[] }[]): GpufleetError {
  return new GpufleetError(f.reason === 'impossible' ? 'PLACEMENT_IMPOSSIBLE' : 'CAPACITY_UNAVAILABLE', f.detail, {
    fields: { reason: f.reason, constraint: f.constraint, ...(hosts ? { hosts } : {}) },
  });
}

/** "12.4" → 12004; "12.10" → 12010 (so 12.10 > 12.4); unparseable → -1. */
export function cudaKey(version: string | null | undefined): number {
  const m = version ? /^\s*(\d+)(?:\.(\d+))?/.exec(version) : null;
  return m ? Number(m[1]) * 1000 + Number(m[2] ?? 0) : -1;
}

export function compareCudaVersions(a: string, b: string): number {
  return cudaKey(a) - cudaKey(b);
}

export interface GpuSlot {
  uuid: string;
  index: number;
  typeId: string | null;
  /** the pod holding it; FAILED_GPU for a GPU in FAILURE (docs/gpu-health.md): never free */
  podId: string | null;
}

/** what a GPU in FAILURE is held by in the scheduler's index: nothing is placed on it until it returns */
export const FAILED_GPU = '\u0000failed-gpu';

/** One host in the index: its record plus incrementally maintained free capacity. */
export interface HostState {
  host: HostRecord;
  schedulable: boolean;
  cudaKey: number;
  /** sorted by GPU index, so allocations take the lowest free indices (neighbours share NVLink/PCIe switches) */
  slots: GpuSlot[];
  typeTotal: Map<string, number>;
  typeFree: Map<string, number>;
  freeGpus: number;
  freeVcpu: number;
  freeMemGb: number;
  freeDiskGb: number;
  pods: Set<string>;
}

/** A request with its derived numbers and sets computed once, not per host. */
export interface CompiledRequest {
  req: PlacementRequest;
  typeIds: string[];
  /** 0 for CPU pods */
  count: number;
  vcpu: number;
  memGb: number;
  diskGb: number;
  dcs: Set<string> | null;
  cudaAllowed: Set<number> | null;
  cudaMin: number | null;
  flavorKnown: boolean;
}

export function compileRequest(req: PlacementRequest): CompiledRequest {
  const errors: string[] = [];
  if (req.gpu && (!Number.isInteger(req.gpu.count) || req.gpu.count < 1)) errors.push('$.gpu.count: must be an integer ≥ 1');
  if (!Number.isFinite(req.diskGb) || req.diskGb < 0) errors.push('$.diskGb: must be a number ≥ 0');
  if (errors.length > 0) throw new GpufleetError('VALIDATION_FAILED', 'invalid placement request', { errors });
  const floorV = req.minVcpu ?? 0;
  const floorM = req.minMemoryGb ?? 0;
  return {
    req,
    typeIds: req.gpu ? [...new Set(req.gpu.typeIds)] : [],
    count: req.gpu ? req.gpu.count : 0,
    vcpu: req.cpu && !req.gpu ? Math.max(req.cpu.vcpuCount, floorV) : floorV,
    memGb: req.cpu && !req.gpu ? Math.max(req.cpu.memoryGb, floorM) : floorM,
    diskGb: req.diskGb,
    dcs: req.dataCenterIds && req.dataCenterIds.length > 0 ? new Set(req.dataCenterIds) : null,
    cudaAllowed:
      req.allowedCudaVersions && req.allowedCudaVersions.length > 0 ? new Set(req.allowedCudaVersions.map(cudaKey)) : null,
    cudaMin: req.minCudaVersion ? cudaKey(req.minCudaVersion) : null,
    flavorKnown: !req.cpu || req.gpu !== undefined || cpuFlavorById(req.cpu.flavorId) !== null,
  };
}

// ---- host predicates (each stage of the diagnosis is one of these) ---------------------------------

export const matchesPin = (h: HostState, c: CompiledRequest): boolean =>
  (c.req.pinnedHostId === undefined || h.host.id === c.req.pinnedHostId) && !c.req.avoidHostIds?.includes(h.host.id);
export const matchesCloud = (h: HostState, c: CompiledRequest): boolean => c.req.cloud === 'ALL' || h.host.cloud === c.req.cloud;
export const matchesDataCenter = (h: HostState, c: CompiledRequest): boolean => c.dcs === null || c.dcs.has(h.host.dataCenterId);
export const matchesCuda = (h: HostState, c: CompiledRequest): boolean =>
  (c.cudaAllowed === null || (h.cudaKey >= 0 && c.cudaAllowed.has(h.cudaKey))) &&
  (c.cudaMin === null || (h.cudaKey >= 0 && h.cudaKey >= c.cudaMin));
export const hasGpuType = (h: HostState, c: CompiledRequest): boolean => c.typeIds.some((t) => (h.typeTotal.get(t) ?? 0) > 0);
export const hasGpuCount = (h: HostState, c: CompiledRequest): boolean =>
  c.typeIds.some((t) => (h.typeTotal.get(t) ?? 0) >= c.count);
export const hasCpuMemoryCapacity = (h: HostState, c: CompiledRequest): boolean =>
  h.host.facts.cpuCount >= c.vcpu && h.host.facts.memoryGb >= c.memGb;
export const hasDiskCapacity = (h: HostState, c: CompiledRequest): boolean => h.host.facts.diskFreeGb >= c.diskGb;
export const hasFreeGpus = (h: HostState, c: CompiledRequest): boolean => c.typeIds.some((t) => (h.typeFree.get(t) ?? 0) >= c.count);
export const hasFreeCpuMemory = (h: HostState, c: CompiledRequest): boolean => h.freeVcpu >= c.vcpu && h.freeMemGb >= c.memGb;
export const hasFreeDisk = (h: HostState, c: CompiledRequest): boolean => h.freeDiskGb >= c.diskGb;

/** Where a host may go at all (static) — checked per candidate on the hot path. */
export const staticOk = (h: HostState, c: CompiledRequest): boolean =>
  matchesPin(h, c) && matchesCloud(h, c) && matchesDataCenter(h, c) && matchesCuda(h, c);
/** Whether it has room right now for the non-GPU part of the request. */
export const roomOk = (h: HostState, c: CompiledRequest): boolean =>
  h.freeVcpu >= c.vcpu && h.freeMemGb >= c.memGb && h.freeDiskGb >= c.diskGb;
