// GraphQL pod inputs (podFindAndDeployOnDemand, deployCpuPod) → the v2 pod create body plus the
// options REST has no field for (placement, a CUDA minimum). The body then goes through the very same
// validation and rules as POST /v2/pods, so the same bad input is refused with the same code; what
// the options mean (a CUDA minimum against the fleet's hosts) is decided in core.
import { parseCpuInstanceId } from '../../fleet/index.ts';
import { fail422 } from '../../model/index.ts';
import { CUDA_VERSION, parseTimer, type PodCreateOptions } from '../../core/index.ts';
import type { StoreReader } from '../../store/index.ts';
import { str } from './context.ts';

export interface GqlEnvInput {
  key: string;
  value?: string | null;
}

/** The union of both pod inputs' fields that mean something here; the rest are accepted and ignored. */
export interface GqlPodInput {
  name?: string | null;
  imageName?: string | null;
  cloudType?: 'ALL' | 'SECURE' | 'COMMUNITY' | null;
  gpuTypeId?: string | null;
  gpuCount?: number | null;
  instanceId?: string | null;
  containerDiskInGb?: number | null;
  volumeInGb?: number | null;
  volumeMountPath?: string | null;
  networkVolumeId?: string | null;
  templateId?: string | null;
  dockerArgs?: string | null;
  ports?: string | null;
  env?: (GqlEnvInput | null)[] | null;
  dataCenterId?: string | null;
  minVcpuCount?: number | null;
  minMemoryInGb?: number | null;
  allowedCudaVersions?: (string | null)[] | null;
  minCudaVersion?: string | null;
  containerRegistryAuthId?: string | null;
  globalNetwork?: boolean | null;
  /** podRentInterruptable only (the on-demand input accepts and ignores it) */
  bidPerGpu?: number | null;
  /** podRentInterruptable (SkyPilot): a minimum CUDA version where allowedCudaVersions is not given */
  cudaVersion?: string | null;
  stopAfter?: string | null;
  terminateAfter?: string | null;
}

/** which create a GraphQL pod input is: on-demand GPU, interruptible (spot) GPU, or CPU */
export type GqlPodKind = 'gpu' | 'spot' | 'cpu';

/** The public platform mounts volumes here when a request names no path. */
export const DEFAULT_VOLUME_PATH = '/workspace';

/** "8888/http, 22/tcp" → ["8888/http", "22/tcp"]; "" or null → undefined (template or default applies). */
export function parsePorts(ports: string | null | undefined): string[] | undefined {
  if (ports === null || ports === undefined) return undefined;
  const list = ports.split(',').map((p) => p.trim()).filter((p) => p !== '');
  return list.length ? list : undefined;
}

/** [{key, value}] → {key: value}; later keys win, as in `docker run -e`. */
export function envObject(env: (GqlEnvInput | null)[] | null | undefined): Record<string, string> | undefined {
  if (!env) return undefined;
  const out: Record<string, string> = {};
  for (const e of env) if (e) out[e.key] = e.value ?? '';
  return Object.keys(out).length ? out : undefined;
}

/** "12.4, 12.5" or ["12.4"] → ["12.4", "12.5"]. */
export function cudaList(v: string | (string | null)[] | null | undefined): string[] | undefined {
  if (v === null || v === undefined) return undefined;
  const list = (typeof v === 'string' ? v.split(',') : v).map((x) => (x ?? '').trim()).filter((x) => x !== '');
  return list.length ? list : undefined;
}

/** minCudaVersion as sent ("" is not set); its syntax is checked here, where the input path is known. */
export function minCudaVersion(v: string | null | undefined, what: string): string | undefined {
  const min = str(v);
  if (min !== undefined && !CUDA_VERSION.test(min)) fail422(what, ['$.input.minCudaVersion: must look like 12.4']);
  return min;
}

/** The public platform's own templates (runpod-python sends templateId "runpod-ubuntu" with every CPU pod). */
const PLATFORM_TEMPLATE = /^runpod-/;

export interface MappedPodCreate {
  body: Record<string, unknown>;
  options: PodCreateOptions;
}

export async function toPodCreate(store: StoreReader, input: GqlPodInput, kind: GqlPodKind): Promise<MappedPodCreate> {
  const body: Record<string, unknown> = {};
  const options: PodCreateOptions = {};
  if (input.name !== null && input.name !== undefined) body.name = input.name;
  const image = str(input.imageName);
  if (image !== undefined) body.image = image;
  // runpod-python sends dockerArgs: "" with every create_pod; an empty start command means "not given"
  // (the template's, or the image's own), never "erase the template's"
  const args = str(input.dockerArgs);
  if (args !== undefined) body.args = args;
  if (input.containerDiskInGb !== null && input.containerDiskInGb !== undefined) body.disk = input.containerDiskInGb;
  const ports = parsePorts(input.ports);
  if (ports) body.ports = ports;
  const env = envObject(input.env);
  if (env) body.env = env;
  const registry = str(input.containerRegistryAuthId);
  if (registry !== undefined) body.registry = registry;
  if (input.globalNetwork) body.globalNetworking = true;

  const path = str(input.volumeMountPath) ?? DEFAULT_VOLUME_PATH;
  const mounts: Record<string, unknown> = {};
  if (input.volumeInGb !== null && input.volumeInGb !== undefined && input.volumeInGb !== 0)
    mounts.persistent = { size: input.volumeInGb, path };
  const volumeId = str(input.networkVolumeId);
  if (volumeId !== undefined) mounts.network = [{ volumeId, path }];
  if (Object.keys(mounts).length) body.mounts = mounts;

  if (input.cloudType === 'SECURE' || input.cloudType === 'COMMUNITY') body.cloud = input.cloudType;
  else options.cloud = 'ALL';
  const dc = str(input.dataCenterId);
  if (dc !== undefined) body.dataCenterIds = [dc];

  const templateId = str(input.templateId);
  if (templateId !== undefined && !(PLATFORM_TEMPLATE.test(templateId) && image !== undefined && !(await store.get('templates', templateId))))
    body.templateId = templateId;

  if (kind === 'gpu' || kind === 'spot') {
    const id = str(input.gpuTypeId);
    if (id === undefined) fail422('pod', ['$.input.gpuTypeId: is required (see the gpuTypes query)']);
    const gpu: Record<string, unknown> = { id, count: input.gpuCount ?? 1 };
    const cuda = cudaList(input.allowedCudaVersions);
    if (cuda) gpu.allowedCudaVersions = cuda;
    body.gpu = gpu;
    // a spot pod: the bid goes through the v2 body's own rules (bidPerGpu > 0, docs/teams.md)
    if (kind === 'spot') Object.assign(body, { interruptible: true, bidPerGpu: input.bidPerGpu });
    const cudaMinimum = str(input.minCudaVersion) ?? (kind === 'spot' && !cuda ? str(input.cudaVersion) : undefined);
    const min = minCudaVersion(cudaMinimum, 'pod');
    if (min !== undefined) options.minCudaVersion = min;
    const minVcpu = nonNegative(input.minVcpuCount, '$.input.minVcpuCount');
    const minMem = nonNegative(input.minMemoryInGb, '$.input.minMemoryInGb');
    if (minVcpu) options.minVcpu = minVcpu;
    if (minMem) options.minMemoryGb = minMem;
  } else {
    const instanceId = str(input.instanceId);
    if (instanceId === undefined) fail422('pod', ['$.input.instanceId: is required, e.g. cpu3c-2-4 (flavor-vCPUs-memoryGB; see the cpuFlavors query)']);
    const cpu = parseCpuInstanceId(instanceId);
    if (!cpu) fail422('pod', [`$.input.instanceId: "${instanceId}" must look like cpu3c-2-4 (flavor-vCPUs-memoryGB)`]);
    body.cpu = cpu;
  }
  // ISO 8601 instants as runpodctl sends them ("" is not set); the pod is stopped / terminated then
  const stopAfter = str(input.stopAfter);
  const terminateAfter = str(input.terminateAfter);
  if (stopAfter !== undefined || terminateAfter !== undefined)
    options.timers = {
      ...(stopAfter !== undefined ? { stopAfter: parseTimer(stopAfter, 'stopAfter') } : {}),
      ...(terminateAfter !== undefined ? { terminateAfter: parseTimer(terminateAfter, 'terminateAfter') } : {}),
    };
  return { body, options };
}

function nonNegative(v: number | null | undefined, path: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (v < 0) fail422('pod', [`${path}: must be >= 0`]);
  return v;
}
