// The fleet's host record: what enrollment learned about a machine and how to reach it.
import type { HostCondition } from './condition.ts';

export type CloudTier = 'SECURE' | 'COMMUNITY';

export type HostStatus = 'READY' | 'DRAINING' | 'UNREACHABLE';

/**
 * A GPU's health (docs/gpu-health.md): the worst of its open incidents. FAILURE: never placed on until a
 * diagnostic passes or an operator clears it; WARNING: schedulable and shown; HEALTHY: no open incident.
 */
export type GpuHealth = 'HEALTHY' | 'WARNING' | 'FAILURE';

/**
 * Something the GPU watcher saw on one GPU (model/rules/gpu-health-table.ts classifies it): an Xid line
 * of the kernel's, or an nvidia-smi counter or state (an uncorrected ECC count rising, a remap failure,
 * the GPU no longer listed, nvidia-smi failing). Repeats of the same Xid or counter add to `count`.
 */
export interface GpuIncident {
  kind: 'xid' | 'counter';
  /** the Xid (kind xid), else null */
  xid: number | null;
  /** the counter or state (kind counter: `ecc.errors.uncorrected.volatile.total`, `gpu.missing`, …), else null */
  counter: string | null;
  /** NVIDIA's name for the Xid (GPU_HAS_FALLEN_OFF_THE_BUS) or ours for the counter */
  mnemonic: string;
  /** what the table says to do: NVIDIA's catalog bucket (RESET_GPU, RESTART_BM, …) */
  action: string;
  /** the health this incident puts the GPU in while it is open */
  health: GpuHealth;
  /** false: seen in the kernel log from before the watcher first read the host (recorded, never acted on) */
  live: boolean;
  /** our sentence, with the kernel line's text or the counter's values */
  message: string;
  firstSeen: string;
  /**
   * when it became live: the first live observation's time (the one that opened it, or the live repeat
   * of a pre-watch incident); null while only pre-watch lines were seen; absent in records from before
   * it (read through incidentLiveSince)
   */
  liveSince?: string | null;
  lastSeen: string;
  count: number;
  /** when a passing diagnostic or an operator closed it; null while it is open */
  resolvedAt: string | null;
}

/** The last diagnostic run on a GPU (POST /v2/hosts/{id}/diagnose, docs/gpu-health.md), or an operator's clear. */
export interface GpuDiagnostic {
  at: string;
  passed: boolean;
  /** `dcgmi` (dcgmi diag -r <level>), `driver-check` (visible, ECC counters stable, nothing pending) or `cleared` (by hand) */
  method: 'dcgmi' | 'driver-check' | 'cleared';
  /** dcgmi's run level (1 or 2); 0 for the others */
  level: number;
  /** our sentence: what passed, or what failed */
  summary: string;
  /** who asked: `user:<key id>` of the operator */
  by: string;
}

export interface HostGpu {
  index: number;
  uuid: string;
  /** name exactly as nvidia-smi prints it, e.g. "NVIDIA H100 80GB HBM3" */
  name: string;
  memoryMiB: number;
  /** GPU type id from the catalog (fleet/gpu-catalog.ts), null when the catalog does not know the name */
  typeId: string | null;
  /** absent on records from before GPU health: HEALTHY */
  health?: GpuHealth;
  /** open and resolved incidents, newest last (at most GPU_INCIDENTS_KEPT) */
  incidents?: GpuIncident[];
  /** nvidia-smi's `pci.bus_id` (`00000000:3B:00.0`), learned by the watcher; maps kernel lines to the GPU */
  busId?: string;
  /** the last diagnostic or clear */
  diagnostic?: GpuDiagnostic;
}

/**
 * Where the GPU watcher is in a host's kernel log and counters (provisioner/gpu-watch), kept in the
 * store so a restart neither forgets nor counts anything twice.
 */
export interface HostGpuWatch {
  /** `journal` (journalctl -k) or `dmesg`; null until the first read */
  source: 'journal' | 'dmesg' | null;
  /** journald cursor of the last line handled */
  cursor: string | null;
  /** boot id and kernel monotonic time (µs) of the last line handled (dmesg; journald lines too) */
  bootId: string | null;
  monotonicUs: number | null;
  /** how many lines handled so far carry exactly that monotonic time (dmesg stamps two lines alike
   *  when they come within its resolution); absent in watches stored before it: 1 */
  linesAtMonotonic?: number;
  /** when the watcher first read the host (control-plane clock); lines before it are not live */
  firstReadAt: string | null;
  /** the boot and monotonic time (µs) on the host at that first read */
  firstReadBootId: string | null;
  firstReadMonotonicUs: number | null;
  /** per GPU uuid, the last counter values counted (`ecc.errors.uncorrected.volatile.total` → 0, `remapped_rows.pending` → 0|1) */
  counters: Record<string, Record<string, number>>;
}

export interface HostFacts {
  arch: string;
  cpuCount: number;
  cpuModel: string;
  memoryGb: number;
  diskFreeGb: number;
  dockerVersion: string;
  dockerRuntimes: string[];
  driverVersion: string | null;
  cudaVersion: string | null;
  gpus: HostGpu[];
  /** the host's IPv4 addresses with their prefix (`ip -4 addr`), gpufleet's overlay devices aside; absent on records from before */
  addresses?: string[];
  /** `default-address-pools` bases of /etc/docker/daemon.json, when it names any */
  dockerPools?: string[];
}

/**
 * An image on the host that some accounts pulled with registry credentials (docs/security.md): only
 * those accounts may run it from the host's cache; any other must pull it with credentials of its
 * own first. Keyed by image id, so a digest, another tag or the id itself names the same entry.
 */
export interface HostPrivateImage {
  /** `sha256:<64 hex>`, as `docker image inspect` shows it */
  imageId: string;
  accountIds: string[];
}

export interface HostRecord {
  id: string;
  /** hostname or IP the control plane dials */
  address: string;
  port: number;
  user: string;
  /** private key (PEM/OpenSSH), encrypted at rest by the store's secret box */
  privateKeyEnc: string;
  /** SHA256:<base64> fingerprint pinned on first use */
  hostKeySha256: string;
  /** a different key the host presented; set until an admin accepts it */
  rejectedHostKeySha256: string | null;
  dataCenterId: string;
  cloud: CloudTier;
  drained: boolean;
  status: HostStatus;
  statusReason: string | null;
  /** Reachable, Schedulable (model/rules/host-conditions.ts); absent on records from before them */
  conditions?: HostCondition[];
  missedHeartbeats: number;
  /** when the first of the heartbeats missed in a row was missed; null (or absent) while it answers */
  unansweredSince?: string | null;
  lastSeenAt: string | null;
  facts: HostFacts;
  /** images pulled with registry credentials, and by whom; absent on records from before it existed */
  privateImages?: HostPrivateImage[];
  /** the GPU watcher's position in the host's kernel log and counters; absent until it first read the host */
  gpuWatch?: HostGpuWatch;
  /** a drain with a deadline in progress or finished (docs/gpu-health.md, "Acting on it"); absent or null: none */
  drain?: HostDrain | null;
  /** unreachable for longer than GPUFLEET_HOST_LOST_AFTER: its pods were moved (docs/gpu-health.md, "Acting on it") */
  lost?: HostLost | null;
  /** containers that did not exit within 30 s of SIGKILL when their pod moved (an operator looks) */
  stuckContainers?: HostStuckContainer[];
  /** what the host's overlay script reported (docs/networking.md); absent until it first ran there */
  overlay?: HostOverlayFacts;
  /** the kernel's boot id as the provisioner's last pass read it: a new one is a restart (docs/pods.md, "A host that restarted"); absent until read */
  bootId?: string | null;
  /**
   * the host's own address of the control plane's SSH connection (its `SSH_CONNECTION`), as the last
   * pass read it: a host enrolled by name gets its overlay address from it (docs/networking.md)
   */
  connectedAddress?: string | null;
  /** the operator's address of the host for the overlay (an IPv4 address the host has); null or absent: the default (docs/networking.md) */
  overlayAddress?: string | null;
  createdAt: string;
}

/** What a host's overlay script reports back (docs/networking.md, "Between data centers"). */
export interface HostOverlayFacts {
  /** the MTU of the interface holding the host's address (the underlay); null: the address is not on one of its interfaces (NAT) */
  underlayMtu: number | null;
  /** the public half of the host's WireGuard key, made on the host (the private half never leaves it); null until it has one */
  wireguardPublicKey: string | null;
}

/** A drain that moves the host's pods off it before a deadline (docs/gpu-health.md, "Acting on it"). */
export interface HostDrain {
  startedAt: string;
  /** RFC 3339: pods still on the host then are stopped */
  deadline: string;
  /** pods on the host (wanting to run) when the drain started */
  total: number;
  /** moved off and placed elsewhere */
  moved: number;
  /** stopped: they could not move (a persistent volume on the host), or the deadline passed */
  stopped: number;
  /** moved and not running yet on their new host: at most GPUFLEET_DRAIN_PARALLEL at a time */
  moving: string[];
  /** when no pod was left to move or stop; null while in progress */
  finishedAt: string | null;
}

/** The host was lost: unreachable longer than GPUFLEET_HOST_LOST_AFTER, or said gone by an operator. */
export interface HostLost {
  /** when it was last seen (its pods are not billed from here) */
  since: string;
  /** when the control plane declared it lost */
  at: string;
  /** an operator confirmed it is gone (POST /v2/hosts/{id}/lost): pods with a network volume move too */
  confirmed: boolean;
}

export interface HostStuckContainer {
  podId: string;
  since: string;
}
