// CPU flavors for CPU pods, named like the public platform's (`cpu3c-2-4` = flavor cpu3c, 2 vCPU, 4 GB).
// A flavor is a shape and price class, not a kind of host: our hosts carry no CPU generation label, so any
// READY host with room can run any flavor (the scheduler only counts vCPUs and memory).

export interface CpuFlavor {
  /** flavor id, e.g. "cpu3c" */
  id: string;
  displayName: string;
  /** vCPU counts offered, ascending powers of two */
  vcpuCounts: readonly number[];
  /** memory ceiling per vCPU in GB; a pod may ask for less, never more */
  memoryPerVcpuGb: number;
  /** USD per vCPU-hour */
  pricePerVcpuHour: number;
}

const f = (
  id: string,
  displayName: string,
  vcpuCounts: number[],
  memoryPerVcpuGb: number,
  pricePerVcpuHour: number,
): CpuFlavor => Object.freeze({ id, displayName, vcpuCounts: Object.freeze(vcpuCounts), memoryPerVcpuGb, pricePerVcpuHour });

// c/g/m = 2/4/8 GB per vCPU as on the public platform; the 5-series is the newer, faster generation,
// priced higher and offered up to 64 vCPUs.
export const CPU_FLAVORS: readonly CpuFlavor[] = Object.freeze([
  f('cpu3c', 'Compute-Optimized', [2, 4, 8, 16, 32], 2, 0.03),
  f('cpu3g', 'General Purpose', [2, 4, 8, 16, 32], 4, 0.04),
  f('cpu3m', 'Memory-Optimized', [2, 4, 8, 16, 32], 8, 0.05),
  f('cpu5c', 'Compute-Optimized (5th gen)', [2, 4, 8, 16, 32, 64], 2, 0.04),
  f('cpu5g', 'General Purpose (5th gen)', [2, 4, 8, 16, 32, 64], 4, 0.05),
  f('cpu5m', 'Memory-Optimized (5th gen)', [2, 4, 8, 16, 32, 64], 8, 0.06),
]);

const byId = new Map(CPU_FLAVORS.map((x) => [x.id, x]));

export function cpuFlavorById(id: string): CpuFlavor | null {
  return byId.get(id) ?? null;
}

export function listCpuFlavors(): CpuFlavor[] {
  return [...CPU_FLAVORS];
}

export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
}

export interface CpuConfigInput {
  id: string;
  vcpuCount: number;
  /** GB; when absent the pod gets the flavor's full ratio (see `defaultCpuMemoryGb`) */
  memory?: number | undefined;
}

/** The memory a CPU pod gets when it names none: the flavor's full per-vCPU ratio. */
export function defaultCpuMemoryGb(flavor: CpuFlavor, vcpuCount: number): number {
  return flavor.memoryPerVcpuGb * vcpuCount;
}

/**
 * Check a CpuConfig against the catalog. Returns `<json_path>: <message>` strings (empty = valid), paths in
 * the project's JSONPath style (`$.cpu.vcpuCount`, as model/rules/validation.ts writes them), so the caller can
 * put them straight into a problem+json `errors` list. `basePath` lets GraphQL/v1 callers use their own.
 */
export function validateCpuConfig(cfg: CpuConfigInput, basePath = '$.cpu'): string[] {
  const errors: string[] = [];
  const flavor = cpuFlavorById(cfg.id);
  if (!flavor) {
    errors.push(`${basePath}.id: unknown CPU flavor ${JSON.stringify(cfg.id)} (known: ${CPU_FLAVORS.map((x) => x.id).join(', ')})`);
  }
  const v = cfg.vcpuCount;
  let vcpuOk = false;
  if (!Number.isInteger(v) || v < 2 || !isPowerOfTwo(v)) {
    errors.push(`${basePath}.vcpuCount: must be a power of two, at least 2`);
  } else if (flavor && !flavor.vcpuCounts.includes(v)) {
    errors.push(`${basePath}.vcpuCount: ${v} is not offered by ${flavor.id} (offered: ${flavor.vcpuCounts.join(', ')})`);
  } else {
    vcpuOk = true;
  }
  if (cfg.memory !== undefined) {
    const m = cfg.memory;
    if (!Number.isInteger(m) || m < 1) {
      errors.push(`${basePath}.memory: must be an integer number of GB, at least 1`);
    } else if (flavor && vcpuOk && m > defaultCpuMemoryGb(flavor, v)) {
      errors.push(
        `${basePath}.memory: ${m} GB exceeds ${defaultCpuMemoryGb(flavor, v)} GB ` +
          `(${flavor.id} gives ${flavor.memoryPerVcpuGb} GB per vCPU × ${v} vCPU)`,
      );
    }
  }
  return errors;
}

/** Parse a GraphQL `instanceId` like "cpu3c-2-4" (flavor-vcpu-memoryGB). Malformed → null. */
export function parseCpuInstanceId(instanceId: string): { id: string; vcpuCount: number; memory: number } | null {
  const m = /^([a-z0-9]+)-(\d+)-(\d+)$/.exec(instanceId);
  if (!m) return null;
  return { id: m[1]!, vcpuCount: Number(m[2]), memory: Number(m[3]) };
}

/** The instance id for a config, the inverse of `parseCpuInstanceId`. */
export function cpuInstanceId(id: string, vcpuCount: number, memory: number): string {
  return `${id}-${vcpuCount}-${memory}`;
}

/** USD per hour for a CPU pod of this flavor; unknown flavor → null (validate first). */
export function cpuPricePerHour(flavorId: string, vcpuCount: number): number | null {
  const flavor = cpuFlavorById(flavorId);
  return flavor ? Math.round(flavor.pricePerVcpuHour * vcpuCount * 10000) / 10000 : null;
}
