// Host records written straight into the store, for tests and benchmarks of the API and scheduler
// that run without the provisioner: nothing dials these hosts, so nothing pretends to be one.
import { randomUUID } from 'node:crypto';
import type { HostRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';

export interface FakeHostSpec {
  id?: string;
  gpuName?: string;
  gpuTypeId?: string | null;
  gpus?: number;
  cloud?: 'SECURE' | 'COMMUNITY';
  dataCenterId?: string;
  cudaVersion?: string;
  cpuCount?: number;
  memoryGb?: number;
  diskFreeGb?: number;
}

export function fakeHostRecord(spec: FakeHostSpec = {}): HostRecord {
  const id = spec.id ?? `host_${randomUUID().slice(0, 8)}`;
  const n = spec.gpus ?? 8;
  return {
    id,
    address: '192.0.2.1',
    port: 22,
    user: 'root',
    privateKeyEnc: '',
    hostKeySha256: 'SHA256:record-only',
    rejectedHostKeySha256: null,
    dataCenterId: spec.dataCenterId ?? 'dc-test-1',
    cloud: spec.cloud ?? 'SECURE',
    drained: false,
    status: 'READY',
    statusReason: 'record only: no provisioner dials it',
    missedHeartbeats: 0,
    lastSeenAt: new Date().toISOString(),
    facts: {
      arch: 'x86_64',
      cpuCount: spec.cpuCount ?? 64,
      cpuModel: 'Test CPU',
      memoryGb: spec.memoryGb ?? 512,
      diskFreeGb: spec.diskFreeGb ?? 4000,
      dockerVersion: '26.1.5',
      dockerRuntimes: ['runc', 'nvidia'],
      driverVersion: n > 0 ? '550.54.15' : null,
      cudaVersion: n > 0 ? (spec.cudaVersion ?? '12.4') : null,
      gpus: Array.from({ length: n }, (_, i) => ({
        index: i,
        uuid: `GPU-${id}-${i}`,
        name: spec.gpuName ?? 'NVIDIA H100 80GB HBM3',
        memoryMiB: 81559,
        typeId: spec.gpuTypeId === undefined ? 'NVIDIA H100 80GB HBM3' : spec.gpuTypeId,
      })),
    },
    createdAt: new Date().toISOString(),
  };
}

export async function seedHosts(store: Store, specs: FakeHostSpec[]): Promise<HostRecord[]> {
  const hosts = specs.map(fakeHostRecord);
  await store.transact((tx) => {
    for (const h of hosts) tx.put('hosts', h);
  });
  return hosts;
}
