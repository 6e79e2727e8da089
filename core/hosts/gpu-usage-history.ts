// Each GPU's utilisation, memory, temperature and power over time (GET /v2/hosts/{id}/metrics,
// docs/gpu-metrics.md): what the GPU watcher's nvidia-smi polls read (provisioner/gpu-watcher.ts), in
// 10-second slots kept 24 hours in this process's memory (SlotHistory: the slots and bucket folding the serverless metrics use too), and
// the last sample of each GPU for the live values (the gauges: telemetry/gpu-utilization.ts). Only the replica that
// watches a host (holds its reconcile lease) samples it; `sampling` says whether this one does now.
import type { GpuUsage, GpuUsageBucket, HostGpuMetrics, HostRecord } from '../../model/index.ts';
import { SlotHistory, type MetricsWindow } from '../observability/index.ts';

const MIB = 1024 * 1024;

const FIELDS = ['utilization', 'memoryUsedBytes', 'memoryTotalBytes', 'temperatureC', 'powerWatts'] as const satisfies readonly (keyof GpuUsage)[];
type Field = (typeof FIELDS)[number];

interface Acc {
  n: number;
  sum: number;
  max: number;
  last: number;
}
type Slot = { samples: number } & Record<Field, Acc | null>;

const emptySlot = (): Slot => ({ samples: 0, utilization: null, memoryUsedBytes: null, memoryTotalBytes: null, temperatureC: null, powerWatts: null });

/**
 * A poll's values (nvidia-smi's field names, numbers already parsed strictly) in the API's units; a
 * value outside what the field can be (a utilisation over 100 %, negative memory) is no value.
 */
export function usageOf(values: Readonly<Record<string, number | null | undefined>>): GpuUsage {
  const v = (name: string, ok: (n: number) => boolean): number | null => {
    const n = values[name];
    return typeof n === 'number' && Number.isFinite(n) && ok(n) ? n : null;
  };
  const util = v('utilization.gpu', (n) => n >= 0 && n <= 100);
  const used = v('memory.used', (n) => n >= 0);
  const total = v('memory.total', (n) => n > 0);
  return {
    utilization: util === null ? null : util / 100,
    memoryUsedBytes: used === null ? null : Math.round(used * MIB),
    memoryTotalBytes: total === null ? null : Math.round(total * MIB),
    temperatureC: v('temperature.gpu', (n) => n > -100 && n < 200),
    powerWatts: v('power.draw', (n) => n >= 0),
  };
}

const key = (hostId: string, uuid: string): string => `${hostId}/${uuid}`;

export class GpuUsageHistory {
  private readonly slots = new SlotHistory<Slot>(emptySlot);
  private readonly current = new Map<string, { at: number; usage: GpuUsage }>();
  private readonly sampled = new Set<string>();
  private lastPrune = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  /** The GPU watcher of this replica polls the host from now (true) or no longer (false). */
  sampling(hostId: string, on: boolean): void {
    if (on) this.sampled.add(hostId);
    else this.sampled.delete(hostId);
  }

  isSampling(hostId: string): boolean {
    return this.sampled.has(hostId);
  }

  /** One successful poll of a host: each listed GPU's values by nvidia-smi field name. Returns each GPU's usage, in the order given. */
  record(hostId: string, gpus: readonly { uuid: string; values: Readonly<Record<string, number | null | undefined>> }[], at = this.clock()): GpuUsage[] {
    const usages: GpuUsage[] = [];
    for (const g of gpus) {
      const usage = usageOf(g.values);
      usages.push(usage);
      const k = key(hostId, g.uuid);
      this.current.set(k, { at, usage });
      const slot = this.slots.at(k, at);
      slot.samples++;
      for (const f of FIELDS) {
        const x = usage[f];
        if (x === null) continue;
        const a = slot[f];
        if (!a) slot[f] = { n: 1, sum: x, max: x, last: x };
        else Object.assign(a, { n: a.n + 1, sum: a.sum + x, max: Math.max(a.max, x), last: x });
      }
    }
    if (at - this.lastPrune >= 60_000) this.prune(at);
    return usages;
  }

  /** Every GPU of the host, in index order, with its buckets of the window. */
  query(host: HostRecord, w: MetricsWindow): HostGpuMetrics[] {
    return [...host.facts.gpus]
      .sort((a, b) => a.index - b.index)
      .map((g) => {
        const c = this.current.get(key(host.id, g.uuid));
        return {
          index: g.index,
          uuid: g.uuid,
          name: g.name,
          current: c ? { at: new Date(c.at).toISOString(), ...c.usage } : null,
          buckets: this.slots.buckets(key(host.id, g.uuid), w.from, w.to, w.step, foldBucket),
        };
      });
  }

  private prune(now: number): void {
    this.lastPrune = now;
    this.slots.prune(now);
    const live = new Set(this.slots.keys());
    for (const k of this.current.keys()) if (!live.has(k)) this.current.delete(k);
  }
}

function foldBucket(slots: Slot[], start: number): GpuUsageBucket {
  const out: GpuUsageBucket = { start: new Date(start).toISOString(), samples: 0, utilization: null, memoryUsedBytes: null, memoryTotalBytes: null, temperatureC: null, powerWatts: null };
  const acc: Partial<Record<Field, Acc>> = {};
  for (const s of slots) {
    out.samples += s.samples;
    for (const f of FIELDS) {
      const a = s[f];
      if (!a) continue;
      const b = acc[f];
      acc[f] = b ? { n: b.n + a.n, sum: b.sum + a.sum, max: Math.max(b.max, a.max), last: a.last } : { ...a };
    }
  }
  for (const f of FIELDS) {
    const a = acc[f];
    if (!a) continue;
    // bytes are whole; a ratio, degrees and watts keep four decimals
    const r = (x: number) => (f === 'memoryUsedBytes' || f === 'memoryTotalBytes' ? Math.round(x) : Math.round(x * 1e4) / 1e4);
    out[f] = { mean: r(a.sum / a.n), max: r(a.max), last: r(a.last) };
  }
  return out;
}
