// The GPU type catalog: the public type ids clients send (`gpuTypeId`, `gpu.id`), the serverless pool each
// type belongs to, and the names nvidia-smi prints so enrollment can map a host's GPUs onto those ids.
// Prices are operator-set per cloud tier (price-book.ts): built-in defaults here, overridden by `<dataDir>/prices.json`.
import type { CloudTier } from '../model/index.ts';

/**
 * Serverless pool ids, exactly as the public platform spells them (SDKs send them verbatim in `gpuIds`).
 * The number is the pool's memory floor in GB: every type in a pool has at least that much memory. A type
 * goes into the largest pool whose floor it meets within its class; pre-Ampere data-center cards (T4,
 * V100) join the Ampere pool of their memory class, because clients know no Turing/Volta pool ids.
 * Cards under 16 GB (RTX 3080/3070) are in no pool: every pool id promises at least 16 GB.
 */
export const GPU_POOL_IDS = [
  'AMPERE_16',
  'AMPERE_24',
  'ADA_24',
  'AMPERE_48',
  'ADA_48_PRO',
  'AMPERE_80',
  'ADA_80_PRO',
  'HOPPER_141',
] as const;
export type GpuPoolId = (typeof GPU_POOL_IDS)[number];

export interface GpuTypeEntry {
  /** public type id, e.g. "NVIDIA H100 80GB HBM3" */
  id: string;
  /** short name shown in listings, e.g. "H100 SXM" */
  displayName: string;
  memoryInGb: number;
  manufacturer: 'Nvidia';
  /** serverless pool, null for cards too small for any pool */
  pool: GpuPoolId | null;
  /** exact strings `nvidia-smi --query-gpu=name` prints for this type (older drivers omit the "NVIDIA " prefix) */
  nvidiaSmiNames: readonly string[];
  cudaCores: number | null;
  /** built-in USD per GPU-hour, replaced by prices.json */
  defaultPrice: Readonly<Record<CloudTier, number>>;
}

const e = (
  id: string,
  displayName: string,
  memoryInGb: number,
  pool: GpuPoolId | null,
  nvidiaSmiNames: string[],
  cudaCores: number | null,
  secure: number,
  community: number,
): GpuTypeEntry =>
  Object.freeze({
    id,
    displayName,
    memoryInGb,
    manufacturer: 'Nvidia' as const,
    pool,
    nvidiaSmiNames: Object.freeze(nvidiaSmiNames),
    cudaCores,
    defaultPrice: Object.freeze({ SECURE: secure, COMMUNITY: community }),
  });

/** Ordered largest-first, the order listings use. */
export const GPU_CATALOG: readonly GpuTypeEntry[] = Object.freeze([
  e('NVIDIA H200', 'H200 SXM', 141, 'HOPPER_141', ['NVIDIA H200'], 16896, 3.99, 3.59),
  e('NVIDIA H100 NVL', 'H100 NVL', 94, 'ADA_80_PRO', ['NVIDIA H100 NVL'], 16896, 2.79, 2.59),
  e('NVIDIA H100 80GB HBM3', 'H100 SXM', 80, 'ADA_80_PRO', ['NVIDIA H100 80GB HBM3'], 16896, 2.99, 2.69),
  e('NVIDIA H100 PCIe', 'H100 PCIe', 80, 'ADA_80_PRO', ['NVIDIA H100 PCIe'], 14592, 2.39, 1.99),
  e('NVIDIA A100-SXM4-80GB', 'A100 SXM', 80, 'AMPERE_80', ['NVIDIA A100-SXM4-80GB', 'A100-SXM4-80GB'], 6912, 1.89, 1.39),
  e('NVIDIA A100 80GB PCIe', 'A100 PCIe', 80, 'AMPERE_80', ['NVIDIA A100 80GB PCIe'], 6912, 1.64, 1.19),
  // Both 40 GB form factors are one type: same memory and cores, and clients rarely care which.
  e('NVIDIA A100-SXM4-40GB', 'A100 40GB', 40, 'AMPERE_24',
    ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-PCIE-40GB', 'A100-SXM4-40GB', 'A100-PCIE-40GB'], 6912, 1.29, 0.99),
  e('NVIDIA L40S', 'L40S', 48, 'ADA_48_PRO', ['NVIDIA L40S'], 18176, 0.86, 0.79),
  e('NVIDIA L40', 'L40', 48, 'ADA_48_PRO', ['NVIDIA L40'], 18176, 0.69, 0.59),
  e('NVIDIA A40', 'A40', 48, 'AMPERE_48', ['NVIDIA A40'], 10752, 0.4, 0.35),
  e('NVIDIA RTX A6000', 'RTX A6000', 48, 'AMPERE_48', ['NVIDIA RTX A6000'], 10752, 0.49, 0.33),
  e('Tesla V100-SXM2-32GB', 'V100 32GB', 32, 'AMPERE_24',
    ['Tesla V100-SXM2-32GB', 'Tesla V100-PCIE-32GB', 'Tesla V100-DGXS-32GB'], 5120, 0.39, 0.29),
  e('NVIDIA GeForce RTX 4090', 'RTX 4090', 24, 'ADA_24', ['NVIDIA GeForce RTX 4090'], 16384, 0.69, 0.34),
  e('NVIDIA GeForce RTX 3090', 'RTX 3090', 24, 'AMPERE_24', ['NVIDIA GeForce RTX 3090', 'GeForce RTX 3090'], 10496, 0.46, 0.22),
  e('NVIDIA RTX A5000', 'RTX A5000', 24, 'AMPERE_24', ['NVIDIA RTX A5000'], 8192, 0.27, 0.16),
  e('NVIDIA L4', 'L4', 24, 'AMPERE_24', ['NVIDIA L4'], 7424, 0.43, 0.28),
  e('NVIDIA A10', 'A10', 24, 'AMPERE_24', ['NVIDIA A10'], 9216, 0.4, 0.3),
  e('NVIDIA RTX A4000', 'RTX A4000', 16, 'AMPERE_16', ['NVIDIA RTX A4000'], 6144, 0.25, 0.17),
  e('Tesla T4', 'T4', 16, 'AMPERE_16', ['Tesla T4'], 2560, 0.25, 0.15),
  e('Tesla V100-SXM2-16GB', 'V100 16GB', 16, 'AMPERE_16',
    ['Tesla V100-SXM2-16GB', 'Tesla V100-PCIE-16GB', 'Tesla V100-FHHL-16GB'], 5120, 0.29, 0.19),
  e('NVIDIA GeForce RTX 3080', 'RTX 3080', 10, null, ['NVIDIA GeForce RTX 3080', 'GeForce RTX 3080'], 8704, 0.25, 0.17),
  e('NVIDIA GeForce RTX 3070', 'RTX 3070', 8, null, ['NVIDIA GeForce RTX 3070', 'GeForce RTX 3070'], 5888, 0.19, 0.13),
]);

/** Pool memory floors in GB, parsed once from the ids so the number and the id cannot disagree. */
export function poolMemoryFloorGb(pool: GpuPoolId): number {
  return Number(pool.split('_')[1]);
}

/**
 * Lowercase, drop vendor/brand words and punctuation, so "A100-SXM4-80GB" (old driver), "NVIDIA
 * A100-SXM4-80GB" and "nvidia a100 sxm4 80gb" all meet. Brand words carry no identity: no two catalog
 * types differ only by them (a test checks that normalized keys are unique).
 */
export function normalizeGpuName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[-_/,()]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '' && w !== 'nvidia' && w !== 'tesla' && w !== 'geforce')
    .join(' ');
}

const byId = new Map<string, GpuTypeEntry>();
const bySmiName = new Map<string, GpuTypeEntry>();
const byNormalized = new Map<string, GpuTypeEntry>();
const byPool = new Map<GpuPoolId, GpuTypeEntry[]>();
for (const t of GPU_CATALOG) {
  byId.set(t.id, t);
  for (const n of t.nvidiaSmiNames) {
    bySmiName.set(n, t);
    byNormalized.set(normalizeGpuName(n), t);
  }
  byNormalized.set(normalizeGpuName(t.id), t);
  if (t.pool !== null) byPool.set(t.pool, [...(byPool.get(t.pool) ?? []), t]);
}

/** Map an nvidia-smi name to its catalog type: exact first, then normalized. Unknown → null. */
export function resolveGpuType(nvidiaSmiName: string): GpuTypeEntry | null {
  const trimmed = nvidiaSmiName.trim();
  return bySmiName.get(trimmed) ?? byId.get(trimmed) ?? byNormalized.get(normalizeGpuName(trimmed)) ?? null;
}

/** Exact public type id lookup (ids are a contract; no fuzzy matching here). */
export function gpuTypeById(id: string): GpuTypeEntry | null {
  return byId.get(id) ?? null;
}

export function isGpuPoolId(value: string): value is GpuPoolId {
  return (GPU_POOL_IDS as readonly string[]).includes(value);
}

/** Types in a serverless pool, catalog order; unknown pool → []. */
export function gpuTypesInPool(poolId: string): GpuTypeEntry[] {
  return isGpuPoolId(poolId) ? [...(byPool.get(poolId) ?? [])] : [];
}

/**
 * Accept either a type id or a pool id (serverless `gpuIds`, v2 `gpu.pools`) and return type ids.
 * Unknown → [] so the caller decides whether that is a 400 or "no capacity".
 */
export function resolveGpuIdOrPool(value: string): string[] {
  const t = gpuTypeById(value);
  if (t) return [t.id];
  return gpuTypesInPool(value).map((x) => x.id);
}
