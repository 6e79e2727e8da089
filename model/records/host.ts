// The fleet's host record: what enrollment learned about a machine and how to reach it.
import type { HostCondition } from './condition.ts';

export type CloudTier = 'SECURE' | 'COMMUNITY';

export type HostStatus = 'READY' | 'DRAINING' | 'UNREACHABLE';

export interface HostGpu {
  index: number;
  uuid: string;
  /** name exactly as nvidia-smi prints it, e.g. "NVIDIA H100 80GB HBM3" */
  name: string;
  memoryMiB: number;
  /** GPU type id from the catalog (fleet/gpu-catalog.ts), null when the catalog does not know the name */
  typeId: string | null;
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
  lastSeenAt: string | null;
  facts: HostFacts;
  /** images pulled with registry credentials, and by whom; absent on records from before it existed */
  privateImages?: HostPrivateImage[];
  createdAt: string;
}
