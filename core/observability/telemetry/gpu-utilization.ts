// GPU utilization from the samples the provisioner takes anyway (nvidia-smi beside each reconcile
// pass, at most once per GPUFLEET_METRICS_INTERVAL_MS per host). A host's last sample is exported
// until it is older than the TTL or the host is removed, so a host that stopped answering does not
// keep reporting its last busy minute forever.
import type { Registry } from 'prom-client';
import type { StoreReader } from '../../../store/index.ts';
import { scrapeGauge } from './scrape-gauge.ts';

export interface GpuSample {
  /** nvidia-smi's index on its host */
  index: number;
  /** percent, 0–100; null when nvidia-smi did not say */
  util: number | null;
  memoryUtil: number | null;
}

export class GpuUtilization {
  private readonly samples = new Map<string, { at: number; gpus: readonly GpuSample[] }>();
  private store: StoreReader | null = null;

  constructor(registry: Registry, private readonly ttlMs: number) {
    const each = async (pick: (g: GpuSample) => number | null, set: (labels: Record<'host' | 'gpu', string>, value: number) => void) => {
      for (const [host, gpus] of await this.current()) for (const g of gpus) {
        const v = pick(g);
        if (v !== null) set({ host, gpu: String(g.index) }, v / 100);
      }
    };
    scrapeGauge(registry, 'gpufleet_gpu_utilization_ratio', 'GPU utilization, 0–1, per host and GPU index, as last sampled', ['host', 'gpu'], (set) =>
      each((g) => g.util, set),
    );
    scrapeGauge(registry, 'gpufleet_gpu_memory_utilization_ratio', 'GPU memory utilization, 0–1, per host and GPU index, as last sampled', ['host', 'gpu'], (set) =>
      each((g) => g.memoryUtil, set),
    );
  }

  sampled(hostId: string, gpus: readonly GpuSample[]): void {
    this.samples.set(hostId, { at: Date.now(), gpus });
  }

  /** From now on, samples of hosts no longer in the store are dropped at the next scrape. */
  forgetRemovedHosts(store: StoreReader): void {
    this.store = store;
  }

  private async current(): Promise<[string, readonly GpuSample[]][]> {
    const now = Date.now();
    const out: [string, readonly GpuSample[]][] = [];
    for (const [host, s] of this.samples) {
      if (now - s.at > this.ttlMs || (this.store && !(await this.store.get('hosts', host)))) this.samples.delete(host);
      else out.push([host, s.gpus]);
    }
    return out;
  }
}
