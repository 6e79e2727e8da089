// Gauges read from the store at each scrape: pods by status, hosts by state, GPUs by type, data
// center and allocation. Reading at scrape time (in-memory lists) keeps them exact without
// instrumenting every write; every status value is exported, at 0 when no record has it.
import type { Registry } from 'prom-client';
import { gpuHealth, POD_STATUSES, type HostStatus, type PodStatus } from '../../../model/index.ts';
import type { StoreReader } from '../../../store/index.ts';
import { scrapeGauge } from './scrape-gauge.ts';

const HOST_STATES = ['READY', 'DRAINING', 'UNREACHABLE'] as const satisfies readonly HostStatus[];

export function registerFleetGauges(registry: Registry, store: StoreReader): void {
  scrapeGauge(registry, 'gpufleet_pods', 'Pods by status (serverless workers are not pods here)', ['status'], async (set) => {
    const counts = new Map<PodStatus, number>(POD_STATUSES.map((s) => [s, 0]));
    for (const p of await store.list('pods')) if (p.endpointId === undefined) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
    for (const [status, n] of counts) set({ status }, n);
  });

  scrapeGauge(registry, 'gpufleet_hosts', 'Enrolled hosts by state', ['state'], async (set) => {
    const counts = new Map<HostStatus, number>(HOST_STATES.map((s) => [s, 0]));
    for (const h of await store.list('hosts')) counts.set(h.status, (counts.get(h.status) ?? 0) + 1);
    for (const [state, n] of counts) set({ state }, n);
  });

  scrapeGauge(
    registry,
    'gpufleet_gpus',
    'GPUs of enrolled hosts by type, data center and state: allocated to a pod or worker, or free (whatever the host state)',
    ['type', 'datacenter', 'state'],
    async (set) => {
      const taken = new Set<string>();
      for (const p of await store.list('pods', { allocated: true })) for (const u of p.gpuUuids) taken.add(u);
      const counts = new Map<string, { type: string; datacenter: string; allocated: number; free: number }>();
      for (const h of await store.list('hosts')) {
        for (const g of h.facts.gpus) {
          const type = g.typeId ?? g.name;
          const key = JSON.stringify([type, h.dataCenterId]);
          const c = counts.get(key) ?? { type, datacenter: h.dataCenterId, allocated: 0, free: 0 };
          if (taken.has(g.uuid)) c.allocated++;
          else c.free++;
          counts.set(key, c);
        }
      }
      for (const c of counts.values()) {
        set({ type: c.type, datacenter: c.datacenter, state: 'allocated' }, c.allocated);
        set({ type: c.type, datacenter: c.datacenter, state: 'free' }, c.free);
      }
    },
  );

  // docs/gpu-health.md: one series per GPU, 0 HEALTHY, 1 WARNING, 2 FAILURE
  scrapeGauge(registry, 'gpufleet_gpu_health', 'Health of each GPU: 0 HEALTHY, 1 WARNING, 2 FAILURE (docs/gpu-health.md)', ['host', 'gpu', 'uuid'], async (set) => {
    for (const h of await store.list('hosts'))
      for (const g of h.facts.gpus) set({ host: h.id, gpu: String(g.index), uuid: g.uuid }, GPU_HEALTH_VALUE[gpuHealth(g)]);
  });
}

const GPU_HEALTH_VALUE = { HEALTHY: 0, WARNING: 1, FAILURE: 2 } as const;
