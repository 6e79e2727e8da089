import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GpufleetError } from '../../model/base/errors.ts';
import { cpuFlavorById, cpuInstanceId, cpuPricePerHour, listCpuFlavors, parseCpuInstanceId, validateCpuConfig } from '../../fleet/cpu-catalog.ts';
import {
  GPU_CATALOG,
  GPU_POOL_IDS,
  gpuTypeById,
  gpuTypesInPool,
  normalizeGpuName,
  poolMemoryFloorGb,
  resolveGpuIdOrPool,
  resolveGpuType,
} from '../../fleet/gpu-catalog.ts';
import { buildPriceBook, DEFAULT_PRICE_BOOK, loadPriceBook, MIN_SPOT_FLOOR, priceFor } from '../../fleet/price-book.ts';

describe('GPU catalog', () => {
  it('resolves nvidia-smi names exactly, then normalized', () => {
    expect(resolveGpuType('NVIDIA H100 80GB HBM3')?.displayName).toBe('H100 SXM');
    expect(resolveGpuType('NVIDIA GeForce RTX 4090')?.id).toBe('NVIDIA GeForce RTX 4090');
    expect(resolveGpuType('Tesla T4')?.id).toBe('Tesla T4');
    expect(resolveGpuType('A100-SXM4-80GB')?.id).toBe('NVIDIA A100-SXM4-80GB'); // pre-R470 drivers drop "NVIDIA "
    expect(resolveGpuType('NVIDIA A100-PCIE-40GB')?.id).toBe('NVIDIA A100-SXM4-40GB');
    expect(resolveGpuType('  nvidia h100 80gb hbm3 ')?.id).toBe('NVIDIA H100 80GB HBM3');
    expect(resolveGpuType('GeForce RTX 3090')?.id).toBe('NVIDIA GeForce RTX 3090');
    expect(resolveGpuType('NVIDIA L40')?.id).toBe('NVIDIA L40'); // not L40S
    expect(resolveGpuType('NVIDIA A10')?.id).toBe('NVIDIA A10'); // not A100
    expect(resolveGpuType('NVIDIA B200')).toBeNull();
  });

  it('ids, nvidia-smi names and their normalized forms are unambiguous', () => {
    const owner = new Map<string, string>();
    for (const t of GPU_CATALOG) {
      for (const key of new Set([t.id, ...t.nvidiaSmiNames].map(normalizeGpuName))) {
        expect(owner.get(key) ?? t.id, `"${key}" claimed twice`).toBe(t.id);
        owner.set(key, t.id);
      }
    }
    expect(new Set(GPU_CATALOG.map((t) => t.id)).size).toBe(GPU_CATALOG.length);
  });

  it('every pooled type meets its pool memory floor; only cards under 16 GB have no pool', () => {
    for (const t of GPU_CATALOG) {
      if (t.pool === null) expect(t.memoryInGb).toBeLessThan(16);
      else expect(t.memoryInGb, t.id).toBeGreaterThanOrEqual(poolMemoryFloorGb(t.pool));
    }
    for (const p of GPU_POOL_IDS) expect(gpuTypesInPool(p).length, p).toBeGreaterThan(0);
  });

  it('resolves type ids and pool ids to type ids', () => {
    expect(resolveGpuIdOrPool('NVIDIA H100 PCIe')).toEqual(['NVIDIA H100 PCIe']);
    expect(resolveGpuIdOrPool('ADA_80_PRO').sort()).toEqual(['NVIDIA H100 80GB HBM3', 'NVIDIA H100 NVL', 'NVIDIA H100 PCIe']);
    expect(resolveGpuIdOrPool('ADA_24')).toEqual(['NVIDIA GeForce RTX 4090']);
    expect(resolveGpuIdOrPool('HOPPER_141')).toEqual(['NVIDIA H200']);
    expect(resolveGpuIdOrPool('NOPE_7')).toEqual([]);
    expect(resolveGpuIdOrPool('h100 sxm')).toEqual([]); // ids are exact; fuzzy matching is for nvidia-smi only
    expect(gpuTypeById('NVIDIA H200')?.memoryInGb).toBe(141);
  });
});

/** the registry error `fn` throws, or null */
function thrown(fn: () => unknown): GpufleetError | null {
  try {
    fn();
  } catch (e) {
    return e as GpufleetError;
  }
  return null;
}

describe('price book', () => {
  const dirs: string[] = [];
  const dataDir = (prices?: string): string => {
    const d = mkdtempSync(join(tmpdir(), 'gpufleet-prices-'));
    dirs.push(d);
    if (prices !== undefined) writeFileSync(join(d, 'prices.json'), prices);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('uses defaults when there is no prices.json', () => {
    const book = loadPriceBook(dataDir());
    expect(book.source).toBeNull();
    expect(book.priceFor('NVIDIA H100 80GB HBM3', 'SECURE')).toBe(priceFor('NVIDIA H100 80GB HBM3', 'SECURE'));
  });

  it('overrides per type and tier, keeping other defaults', () => {
    const book = loadPriceBook(dataDir(JSON.stringify({ 'NVIDIA H100 80GB HBM3': { SECURE: 2.5 }, 'Tesla T4': { COMMUNITY: 0 } })));
    expect(book.priceFor('NVIDIA H100 80GB HBM3', 'SECURE')).toBe(2.5);
    expect(book.priceFor('NVIDIA H100 80GB HBM3', 'COMMUNITY')).toBe(gpuTypeById('NVIDIA H100 80GB HBM3')!.defaultPrice.COMMUNITY);
    expect(book.priceFor('Tesla T4', 'COMMUNITY')).toBe(0);
  });

  it('rejects a bad file with every problem listed', () => {
    const bad = JSON.stringify({ 'NVIDIA H100 80GB HBM3': { SECURE: -1, SPOT: 1 }, 'H100': { SECURE: 1 } });
    const err = thrown(() => loadPriceBook(dataDir(bad)));
    expect(err?.code).toBe('VALIDATION_FAILED');
    expect(err?.errors).toEqual([
      '$["NVIDIA H100 80GB HBM3"].SECURE: must be a non-negative number (USD per GPU-hour)',
      '$["NVIDIA H100 80GB HBM3"].SPOT: unknown cloud tier',
      '$.H100: unknown GPU type id',
    ]);
    expect(() => loadPriceBook(dataDir('{oops'))).toThrow(expect.objectContaining({ code: 'INVALID_JSON' }));
  });

  it('spot floors: half the tier\'s on-demand price by default, one number or per tier in prices.json, always > 0', () => {
    const h100 = 'NVIDIA H100 80GB HBM3';
    const d = gpuTypeById(h100)!.defaultPrice;
    expect(DEFAULT_PRICE_BOOK.spotFloor(h100, 'SECURE')).toBeCloseTo(d.SECURE / 2, 4);
    expect(DEFAULT_PRICE_BOOK.spotFloor(h100, 'COMMUNITY')).toBeCloseTo(d.COMMUNITY / 2, 4);
    for (const t of GPU_CATALOG) for (const c of ['SECURE', 'COMMUNITY'] as const) expect(DEFAULT_PRICE_BOOK.spotFloor(t.id, c)).toBeGreaterThan(0);
    const book = buildPriceBook({ [h100]: { SECURE: 3, spotFloor: 1.25 }, 'Tesla T4': { COMMUNITY: 0, spotFloor: { SECURE: 0.1 } } });
    expect(book.spotFloor(h100, 'SECURE')).toBe(1.25);
    expect(book.spotFloor(h100, 'COMMUNITY')).toBe(1.25);
    expect(book.spotFloor('Tesla T4', 'SECURE')).toBe(0.1);
    // a free tier still has a floor above 0, so a bid always means something
    expect(book.spotFloor('Tesla T4', 'COMMUNITY')).toBe(MIN_SPOT_FLOOR);
    const err = thrown(() => buildPriceBook({ [h100]: { spotFloor: 0 }, 'Tesla T4': { spotFloor: { SPOT: 1, SECURE: -2 } }, 'NVIDIA L4': { spotFloor: 'x' } }));
    expect(err?.code).toBe('VALIDATION_FAILED');
    expect(err?.errors).toEqual([
      '$["NVIDIA H100 80GB HBM3"].spotFloor: must be a number > 0 (USD per GPU-hour)',
      '$["Tesla T4"].spotFloor.SPOT: unknown cloud tier',
      '$["Tesla T4"].spotFloor.SECURE: must be a number > 0 (USD per GPU-hour)',
      '$["NVIDIA L4"].spotFloor: must be a number > 0 or an object with SECURE and/or COMMUNITY floors',
    ]);
  });

  it('an unknown type has no price', () => {
    expect(() => priceFor('NVIDIA B200', 'SECURE')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });
});

describe('CPU flavors', () => {
  it('lists the public flavor families', () => {
    expect(listCpuFlavors().map((f) => f.id)).toEqual(['cpu3c', 'cpu3g', 'cpu3m', 'cpu5c', 'cpu5g', 'cpu5m']);
    expect(cpuFlavorById('cpu3g')?.memoryPerVcpuGb).toBe(4);
    expect(cpuFlavorById('gpu1')).toBeNull();
  });

  it('validates flavor, vCPU count and memory with JSON paths', () => {
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 4, memory: 8 })).toEqual([]);
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 4 })).toEqual([]);
    expect(validateCpuConfig({ id: 'cpu9z', vcpuCount: 4, memory: 8 })).toEqual([expect.stringMatching(/^\$\.cpu\.id: unknown CPU flavor/)]);
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 6, memory: 8 })).toEqual(['$.cpu.vcpuCount: must be a power of two, at least 2']);
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 1, memory: 1 })).toEqual(['$.cpu.vcpuCount: must be a power of two, at least 2']);
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 64, memory: 8 })).toEqual([
      '$.cpu.vcpuCount: 64 is not offered by cpu3c (offered: 2, 4, 8, 16, 32)',
    ]);
    expect(validateCpuConfig({ id: 'cpu3c', vcpuCount: 4, memory: 9 })).toEqual([
      '$.cpu.memory: 9 GB exceeds 8 GB (cpu3c gives 2 GB per vCPU × 4 vCPU)',
    ]);
    expect(validateCpuConfig({ id: 'cpu3m', vcpuCount: 4, memory: 0 }, '$.input')).toEqual([
      '$.input.memory: must be an integer number of GB, at least 1',
    ]);
  });

  it('round-trips GraphQL instance ids and prices per hour', () => {
    expect(parseCpuInstanceId('cpu3c-2-4')).toEqual({ id: 'cpu3c', vcpuCount: 2, memory: 4 });
    expect(parseCpuInstanceId('cpu3c-2')).toBeNull();
    expect(cpuInstanceId('cpu5m', 8, 64)).toBe('cpu5m-8-64');
    expect(cpuPricePerHour('cpu3c', 2)).toBe(0.06);
    expect(cpuPricePerHour('nope', 2)).toBeNull();
  });
});
