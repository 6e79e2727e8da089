// The pod resource: the stored record, and the view every interface returns (spec 2.1).
import type { CloudTier } from './host.ts';
import { actionsFor } from './pod-state-machine.ts';
import { billable } from './pod-move.ts';
import type { WorkerFields } from './worker.ts';
import type { EventView } from './event.ts';
import type { PodCondition } from './condition.ts';
import type { PodMove } from './pod-move.ts';

export { POD_STATUSES, POD_ACTIONS, type PodStatus, type PodAction, type DesiredStatus } from './pod-status.ts';
import type { PodStatus, PodAction, DesiredStatus } from './pod-status.ts';

export interface PersistentMount {
  size: number;
  path: string;
}
export interface NetworkMount {
  volumeId: string;
  path: string;
}
export interface Mounts {
  persistent?: PersistentMount;
  network?: NetworkMount[];
}
export interface GpuConfig {
  id: string;
  count: number;
}
export interface CpuConfig {
  id: string;
  vcpuCount: number;
  memory: number;
}

/** the fields a user sets (create, PATCH, templates, constructs) */
export interface PodSpec {
  name: string;
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  mounts: Mounts;
  gpu?: GpuConfig;
  cpu?: CpuConfig;
  cloud: CloudTier;
  locked: boolean;
  template: string | null;
  /**
   * an interruptible (spot) pod: runs at its bid and gives its GPUs back to an on-demand pod or a higher
   * bid (docs/teams.md "Interruptible pods"); absent on records from before them (on-demand)
   */
  interruptible?: boolean;
  /** USD per GPU-hour an interruptible pod bids (null or absent: on-demand) */
  bidPerGpu?: number | null;
}

/** Why and when an interruptible pod was preempted (model/rules/preemption.ts); cleared when it starts again. */
export interface PodPreemption {
  at: string;
  /** what took its GPUs: an on-demand pod, or an interruptible pod bidding more */
  cause: 'on-demand' | 'higher-bid';
  /** seconds between SIGTERM and SIGKILL (GPUFLEET_PREEMPT_GRACE) */
  graceSeconds: number;
}

export interface RuntimePort {
  private: number;
  public: number | null;
  type: string;
  ip: string | null;
}

/** a port as the view shows it: an HTTP port has its URL on the proxy domain (docs/connect.md) */
export interface RuntimePortView extends RuntimePort {
  url: string | null;
}

/** where pods' ports are reached (GPUFLEET_PROXY_DOMAIN, GPUFLEET_PROXY_SCHEME); null: nowhere */
export interface PortProxy {
  domain: string;
  scheme: 'https' | 'http';
}

/** `https://<pod id>-<port>.<proxy domain>` */
export function podPortUrl(podId: string, port: number, proxy: PortProxy): string {
  return `${proxy.scheme}://${podId}-${port}.${proxy.domain}`;
}

/** one way to reach a pod's SSH server (the public OpenAPI's shape) */
export interface SshAccess {
  host: string;
  port: number;
  username: string;
  command: string;
}

/** what the provisioner last saw on the host */
export interface PodObserved {
  containerId: string | null;
  containerStartedAt: string | null;
  ports: RuntimePort[];
  gpus: { util: number; memoryUtil: number }[];
  cpuUtil: number | null;
  memoryUtil: number | null;
  observedAt: string;
  /** its published 22/tcp answered with an SSH server's greeting (provisioner/ssh-probe.ts); absent: not checked */
  sshAnswers?: boolean;
  /**
   * the host's boot id when its container was seen running (provisioner/host-docker.ts): a container
   * found ended under another boot id ended with the host's restart (docs/pods.md, "A host that restarted")
   */
  hostBootId?: string;
}

export interface PodRecord extends PodSpec {
  id: string;
  accountId: string;
  status: PodStatus;
  /** why the pod is in its status (what it waits for, what failed); null when there is nothing to say */
  statusReason: string | null;
  /** Scheduled, ImageReady, ContainerRunning (model/rules/pod-conditions.ts); absent on records from before them */
  conditions?: PodCondition[];
  desiredStatus: DesiredStatus;
  /** placement constraints kept for the next start */
  dataCenterIds: string[];
  allowedCudaVersions: string[];
  hostId: string | null;
  dataCenterId: string | null;
  gpuUuids: string[];
  /** the pod holds its host's compute (GPUs, vCPUs, memory, disk); false once stopped or terminated */
  allocated: boolean;
  /** vCPUs and memory (GB) a GPU pod reserves beside its GPUs (GraphQL minVcpuCount/minMemoryInGb); kept for the next start */
  reservedVcpu: number;
  reservedMemoryGb: number;
  /** USD per hour while the pod holds compute, fixed at placement */
  costPerHr: number;
  cudaVersion: string | null;
  /** bumped by each restart action; the provisioner restarts the container until it has seen it */
  restartGeneration: number;
  /** the restart generation the provisioner last carried out */
  restartedGeneration: number;
  /** bumped when a PATCH changes the container's configuration; the container is recreated */
  specGeneration: number;
  observed: PodObserved | null;
  /** ownership tags (stack and construct path for declared resources) */
  tags: Record<string, string>;
  /** the pod is on its account's private network across hosts (docs/networking.md); absent = false */
  globalNetworking?: boolean;
  /**
   * its address there (GPUFLEET_OVERLAY_CIDR), unique in the fleet, kept from the first time it was
   * turned on until the pod is terminated, also while it is turned off
   */
  overlayIp?: string;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  terminatedAt: string | null;
  /** set while an interruptible pod stays stopped after a preemption; the provisioner stops its container with this grace */
  preemption?: PodPreemption | null;
  /**
   * GraphQL `stopAfter` / `terminateAfter` (docs/pods.md#stop-and-terminate-timers): when the pod is
   * stopped or terminated (RFC 3339, UTC); cleared once done. Absent on pods stored before them.
   */
  stopAfter?: string | null;
  terminateAfter?: string | null;
  /** serverless workers only (model/records/worker.ts): the endpoint the worker serves; such pods are not listed as pods */
  endpointId?: string;
  worker?: WorkerFields;
  /** the last time the pod was moved off a host (drain, lost host, failed GPU; docs/gpu-health.md "Acting on it") */
  move?: PodMove;
}

/** A pod record that is a serverless worker (model/records/worker.ts). */
export type WorkerPod = PodRecord & { endpointId: string; worker: WorkerFields };

export function isWorker(pod: PodRecord): pod is WorkerPod {
  return typeof pod.endpointId === 'string' && pod.worker !== undefined;
}

/** An interruptible (spot) pod: it may be preempted by an on-demand pod or a higher bid. */
export function isInterruptible(pod: Pick<PodRecord, 'interruptible'>): boolean {
  return pod.interruptible === true;
}

export interface PodView {
  id: string;
  name: string;
  status: PodStatus;
  actions: PodAction[];
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  mounts: Mounts;
  gpu?: GpuConfig;
  cpu?: CpuConfig;
  cloud: CloudTier;
  dataCenterId: string | null;
  template: string | null;
  cost: number;
  locked: boolean;
  globalNetworking: { enabled: boolean; ip?: string; internalDns?: string };
  runtime: PodRuntime | null;
  createdAt: string;
  startedAt: string | null;
  cudaVersion: string | null;
  ssh: { proxy: SshAccess | null; direct: SshAccess | null };
  desiredStatus: DesiredStatus;
  statusReason: string | null;
  /** docs/pods.md "Conditions"; [] for a pod stored before conditions existed */
  conditions: PodCondition[];
  machineId: string | null;
  tags: Record<string, string>;
  /** docs/teams.md "Interruptible pods": true for a spot pod, which runs at its bid (USD per GPU-hour) */
  interruptible: boolean;
  bidPerGpu: number | null;
  /** when the pod will be stopped / terminated by its timer (docs/pods.md#stop-and-terminate-timers); null when none */
  stopAfter: string | null;
  terminateAfter: string | null;
  /** one pod's answers (create, get, update, action): its last few events; not in lists (docs/events.md) */
  events?: EventView[];
}

export interface PodRuntime {
  uptime: number;
  gpus: { util: number; memoryUtil: number }[];
  cpu: { util: number };
  memory: { util: number };
  ports: RuntimePortView[];
}

export function podRuntime(pod: PodRecord, now = Date.now(), proxy: PortProxy | null = null): PodRuntime | null {
  if (pod.status !== 'RUNNING' || !pod.observed) return null;
  const o = pod.observed;
  const started = o.containerStartedAt ? Date.parse(o.containerStartedAt) : now;
  return {
    uptime: Math.max(0, Math.floor((now - started) / 1000)),
    gpus: o.gpus,
    cpu: { util: o.cpuUtil ?? 0 },
    memory: { util: o.memoryUtil ?? 0 },
    ports: o.ports.map((p) => ({ ...p, url: proxy && p.type === 'http' ? podPortUrl(pod.id, p.private, proxy) : null })),
  };
}

/**
 * How to reach the pod's SSH server while it runs: `proxy` through the control plane (`gpufleet pods
 * ssh`, no port published), `direct` when it publishes 22/tcp and an SSH server answers there.
 */
export function podSsh(pod: PodRecord): PodView['ssh'] {
  if (pod.status !== 'RUNNING' || !pod.observed) return { proxy: null, direct: null };
  const proxy: SshAccess = { host: pod.id, port: 22, username: 'root', command: `gpufleet pods ssh ${pod.id}` };
  const p22 = pod.observed.ports.find((p) => p.private === 22 && p.type === 'tcp');
  const direct: SshAccess | null =
    p22?.public && p22.ip && pod.observed.sshAnswers === true
      ? { host: p22.ip, port: p22.public, username: 'root', command: `ssh root@${p22.ip} -p ${p22.public}` }
      : null;
  return { proxy, direct };
}

/** spec 2.1's `globalNetworking`: on and addressed, or `{enabled: false}` */
export function globalNetworkingView(pod: PodRecord, internalDomain: string): PodView['globalNetworking'] {
  if (pod.globalNetworking !== true || !pod.overlayIp || pod.status === 'TERMINATED') return { enabled: false };
  return { enabled: true, ip: pod.overlayIp, internalDns: `${pod.id}.${internalDomain}` };
}

/**
 * `proxy`: where HTTP ports have URLs (the control plane's proxy settings); none by default.
 * `internalDomain`: GPUFLEET_INTERNAL_DOMAIN, which the pod's `internalDns` ends with.
 */
export function toPodView(pod: PodRecord, now = Date.now(), proxy: PortProxy | null = null, internalDomain = 'runpod.internal'): PodView {
  const view: PodView = {
    id: pod.id,
    name: pod.name,
    status: pod.status,
    actions: actionsFor(pod.status, pod.locked),
    image: pod.image,
    args: pod.args,
    disk: pod.disk,
    ports: pod.ports,
    env: pod.env,
    registry: pod.registry,
    mounts: pod.mounts,
    cloud: pod.cloud,
    dataCenterId: pod.dataCenterId,
    template: pod.template,
    cost: billable(pod) ? pod.costPerHr : 0,
    locked: pod.locked,
    globalNetworking: globalNetworkingView(pod, internalDomain),
    runtime: podRuntime(pod, now, proxy),
    createdAt: pod.createdAt,
    startedAt: pod.startedAt,
    cudaVersion: pod.cudaVersion,
    ssh: podSsh(pod),
    desiredStatus: pod.desiredStatus,
    statusReason: pod.statusReason,
    conditions: pod.conditions ?? [],
    machineId: pod.hostId,
    tags: pod.tags,
    interruptible: isInterruptible(pod),
    bidPerGpu: isInterruptible(pod) ? (pod.bidPerGpu ?? null) : null,
    stopAfter: pod.stopAfter ?? null,
    terminateAfter: pod.terminateAfter ?? null,
  };
  if (pod.gpu) view.gpu = pod.gpu;
  else if (pod.cpu) view.cpu = pod.cpu;
  return view;
}

/** The runtime fields of a pod record not yet placed on a host (pods and serverless workers alike). */
type UnplacedFields = 'hostId' | 'dataCenterId' | 'gpuUuids' | 'allocated' | 'reservedVcpu' | 'reservedMemoryGb' | 'costPerHr' | 'cudaVersion' | 'restartGeneration' | 'restartedGeneration' | 'specGeneration' | 'observed';
export const unplaced = (): Pick<PodRecord, UnplacedFields> => ({
  hostId: null,
  dataCenterId: null,
  gpuUuids: [],
  allocated: false,
  reservedVcpu: 0,
  reservedMemoryGb: 0,
  costPerHr: 0,
  cudaVersion: null,
  restartGeneration: 0,
  restartedGeneration: 0,
  specGeneration: 0,
  observed: null,
});
