// GPU utilisation and memory gauges from the nvidia-smi samples the provisioner takes anyway: beside
// each reconcile pass (at most once per GPUFLEET_METRICS_INTERVAL_MS per host: utilisation and memory
// utilisation) and at each poll of the GPU watcher (every GPUFLEET_GPU_POLL_SECONDS: utilisation and
// memory used; docs/gpu-metrics.md). Each field keeps the last value either source gave, per GPU; a
// value is exported until it is older than the TTL or the host is removed, so a host that stopped
// answering does not keep reporting its last busy minute forever. A value the driver did not give
// (`[N/A]`) has no series, never a 0.
import type { Registry } from 'prom-client';
import type { StoreReader } from '../../../store/index.ts';
import { scrapeGauge } from './scrape-gauge.ts';

export interface GpuSample {
  /** nvidia-smi's index on its host */
  index: number;
  uuid: string;
  /** percent, 0–100; null when nvidia-smi did not say; absent: this sample does not read it */
  util?: number | null;
  memoryUtil?: number | null;
  /** memory.used in bytes */
  memoryUsedBytes?: number | null;
}

type Field = 'util' | 'memoryUtil' | 'memoryUsedBytes';
const FIELDS: readonly Field[] = ['util', 'memoryUtil', 'memoryUsedBytes'];

interface Gpu {
  index: number;
  values: Partial<Record<Field, { value: number | null; at: number }>>;
}

type Labels = Record<'host' | 'gpu' | 'uuid', string>;

export class GpuUtilization {
  /** host id → GPU uuid → its fields */
  private readonly hosts = new Map<string, Map<string, Gpu>>();
  private store: StoreReader | null = null;

  constructor(
    registry: Registry,
    private readonly ttlMs: number,
  ) {
    const gauge = (name: string, help: string, field: Field, scale: number) =>
      scrapeGauge(registry, name, help, ['host', 'gpu', 'uuid'], async (set: (labels: Labels, value: number) => void) => {
        for (const [host, gpus] of await this.current())
          for (const [uuid, g] of gpus) {
            const v = g.values[field];
            if (v && v.value !== null && Date.now() - v.at <= this.ttlMs) set({ host, gpu: String(g.index), uuid }, v.value * scale);
          }
      });
    gauge('gpufleet_gpu_utilization_ratio', 'GPU utilization, 0–1, per host and GPU, as last sampled by nvidia-smi', 'util', 1 / 100);
    gauge('gpufleet_gpu_memory_utilization_ratio', 'GPU memory utilization (utilization.memory), 0–1, per host and GPU, as last sampled', 'memoryUtil', 1 / 100);
    gauge('gpufleet_gpu_memory_used_bytes', "GPU memory used (memory.used), in bytes, per host and GPU, as the GPU watcher's last poll read it", 'memoryUsedBytes', 1);
  }

  sampled(hostId: string, gpus: readonly GpuSample[]): void {
    const at = Date.now();
    let mine = this.hosts.get(hostId);
    if (!mine) this.hosts.set(hostId, (mine = new Map()));
    for (const s of gpus) {
      const g = mine.get(s.uuid) ?? { index: s.index, values: {} };
      g.index = s.index;
      for (const f of FIELDS) {
        const v = s[f];
        if (v !== undefined) g.values[f] = { value: v, at };
      }
      mine.set(s.uuid, g);
    }
  }

  /** From now on, samples of hosts no longer in the store are dropped at the next scrape. */
  forgetRemovedHosts(store: StoreReader): void {
    this.store = store;
  }

  private async current(): Promise<[string, Map<string, Gpu>][]> {
    const now = Date.now();
    const out: [string, Map<string, Gpu>][] = [];
    for (const [host, gpus] of this.hosts) {
      const newest = Math.max(...[...gpus.values()].flatMap((g) => Object.values(g.values).map((v) => v.at)));
      if (!(now - newest <= this.ttlMs) || (this.store && !(await this.store.get('hosts', host)))) this.hosts.delete(host);
      else out.push([host, gpus]);
    }
    return out;
  }
}
