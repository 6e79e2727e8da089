// Prometheus gauges of each GPU's last poll (docs/gpu-metrics.md), beside gpufleet_gpu_health:
// gpufleet_gpu_utilization_ratio and gpufleet_gpu_memory_used_bytes {host, gpu, uuid}. A replica
// exports only the GPUs of the hosts its watcher polls now (with several replicas each GPU appears on
// exactly one), and a field the driver gave no value for has no series (never a 0).
import type { Registry } from 'prom-client';
import type { StoreReader } from '../../store/index.ts';
import { scrapeGauge } from '../observability/index.ts';
import type { GpuUsage, GpuUsageHistory } from './gpu-usage-history.ts';

export function registerGpuUsageGauges(registry: Registry, store: StoreReader, history: GpuUsageHistory): void {
  const gauge = (name: string, help: string, field: keyof GpuUsage) =>
    scrapeGauge(registry, name, help, ['host', 'gpu', 'uuid'], async (set) => {
      for (const h of await store.list('hosts')) {
        if (!history.isSampling(h.id)) continue;
        for (const g of h.facts.gpus) {
          const v = history.live(h.id, g.uuid)?.[field];
          if (v !== null && v !== undefined) set({ host: h.id, gpu: String(g.index), uuid: g.uuid }, v);
        }
      }
    });
  gauge('gpufleet_gpu_utilization_ratio', "Each GPU's utilization.gpu at the last nvidia-smi poll, 0 to 1 (docs/gpu-metrics.md)", 'utilization');
  gauge('gpufleet_gpu_memory_used_bytes', "Each GPU's memory.used at the last nvidia-smi poll, in bytes (docs/gpu-metrics.md)", 'memoryUsedBytes');
}
