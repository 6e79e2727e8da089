// The GraphQL `Pod` type over the one pod record: the same pod `GET /v2/pods/{id}` shows, in the
// field names and shapes the public clients read (env as "K=V" strings, ports as a comma string).
import { gpuTypeById } from '../../fleet/index.ts';
import { cpuFlavorById } from '../../fleet/index.ts';
import { billable, isInterruptible } from '../../model/index.ts';
import { podRuntime, type PodRecord } from '../../model/index.ts';
import { hostOf, type GqlContext } from './context.ts';

/** Private, loopback, link-local and CGNAT addresses are not reachable from the internet. */
export function isPublicIp(ip: string | null): boolean {
  if (!ip) return false;
  if (ip.includes(':')) return !/^(::1$|f[cd]|fe[89ab])/i.test(ip);
  const [a = 0, b = 0] = ip.split('.').map(Number);
  return !(a === 10 || a === 127 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127));
}

/**
 * vCPUs and memory a pod can use. CPU pods reserve theirs; a GPU pod gets its GPUs' share of the host
 * (host total × pod GPUs / host GPUs), which is what the platform reports for GPU pods too.
 */
async function hostShare(p: PodRecord, ctx: GqlContext, field: 'cpuCount' | 'memoryGb'): Promise<number> {
  if (p.cpu) return field === 'cpuCount' ? p.cpu.vcpuCount : p.cpu.memory;
  if (!p.hostId || !p.gpu) return 0;
  const host = await hostOf(ctx, p.hostId);
  const gpus = host?.facts.gpus.length ?? 0;
  if (!host || gpus === 0) return 0;
  return Math.floor((host.facts[field] * p.gpu.count) / gpus);
}

const cost = (p: PodRecord) => (billable(p) ? p.costPerHr : 0);

export const podFields = {
  imageName: (p: PodRecord) => p.image,
  dockerArgs: (p: PodRecord) => p.args,
  dockerId: (p: PodRecord) => p.observed?.containerId ?? null,
  env: (p: PodRecord) => Object.entries(p.env).map(([k, v]) => `${k}=${v}`),
  gpuCount: (p: PodRecord) => p.gpu?.count ?? 0,
  vcpuCount: (p: PodRecord, _a: unknown, ctx: GqlContext) => hostShare(p, ctx, 'cpuCount'),
  memoryInGb: (p: PodRecord, _a: unknown, ctx: GqlContext) => hostShare(p, ctx, 'memoryGb'),
  containerDiskInGb: (p: PodRecord) => p.disk,
  volumeInGb: (p: PodRecord) => p.mounts.persistent?.size ?? 0,
  volumeMountPath: (p: PodRecord) => p.mounts.persistent?.path ?? p.mounts.network?.[0]?.path ?? null,
  networkVolumeId: (p: PodRecord) => p.mounts.network?.[0]?.volumeId ?? null,
  templateId: (p: PodRecord) => p.template,
  containerRegistryAuthId: (p: PodRecord) => p.registry,
  costPerHr: cost,
  adjustedCostPerHr: cost,
  desiredStatus: (p: PodRecord) => p.desiredStatus,
  lastStatusChange: (p: PodRecord) => `${p.statusReason ?? p.status}: ${p.updatedAt}`,
  machineId: (p: PodRecord) => p.hostId,
  // the public platform's two kinds (docs/teams.md): spot pods are INTERRUPTABLE (its spelling)
  podType: (p: PodRecord) => (isInterruptible(p) ? 'INTERRUPTABLE' : 'RESERVED'),
  bidPerGpu: (p: PodRecord) => (isInterruptible(p) ? (p.bidPerGpu ?? null) : null),
  cloudType: (p: PodRecord) => p.cloud,
  port: (p: PodRecord) => (p.ports[0] ? Number.parseInt(p.ports[0], 10) : null),
  ports: (p: PodRecord) => p.ports.join(','),
  uptimeSeconds: (p: PodRecord) => podRuntime(p)?.uptime ?? 0,
  runtime: (p: PodRecord) => {
    const rt = podRuntime(p);
    if (!rt) return null;
    return {
      uptimeInSeconds: rt.uptime,
      ports: rt.ports.map((x) => ({ ip: x.ip, isIpPublic: isPublicIp(x.ip), privatePort: x.private, publicPort: x.public, type: x.type })),
      gpus: rt.gpus.map((g, i) => ({ id: p.gpuUuids[i] ?? String(i), gpuUtilPercent: g.util, memoryUtilPercent: g.memoryUtil })),
      container: { cpuPercent: rt.cpu.util, memoryPercent: rt.memory.util },
    };
  },
  machine: (p: PodRecord) => {
    if (!p.hostId) return null;
    const gpuType = p.gpu ? gpuTypeById(p.gpu.id) : null;
    return {
      // the platform's SSH proxy user is `<podHostId>@ssh...`; there is no proxy here, but the id is stable
      podHostId: `${p.id}-${p.hostId}`,
      gpuDisplayName: gpuType?.displayName ?? (p.cpu ? (cpuFlavorById(p.cpu.id)?.displayName ?? p.cpu.id) : null),
      gpuTypeId: p.gpu?.id ?? null,
      location: p.dataCenterId,
      dataCenterId: p.dataCenterId,
      secureCloud: p.cloud === 'SECURE',
      cudaVersion: p.cudaVersion,
      gpuAvailable: null,
      maintenanceStart: null,
      maintenanceEnd: null,
      maintenanceNote: null,
    };
  },
};
