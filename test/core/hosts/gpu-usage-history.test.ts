// GpuUsageHistory (docs/gpu-metrics.md), pure with a clock: polls in the API's units (a ratio, bytes;
// a value out of range or missing is null, never 0), folded into the buckets of a window (mean,
// highest, last; null where no poll gave a value), the last poll per GPU, whether the host is sampled
// here, and the 24 h retention.
import { describe, expect, it } from 'vitest';
import { GpuUsageHistory, usageOf } from '../../../core/index.ts';
import type { HostRecord } from '../../../model/index.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const host = { id: 'h1', facts: { gpus: [{ index: 1, uuid: 'GPU-b', name: 'NVIDIA H100 80GB HBM3' }, { index: 0, uuid: 'GPU-a', name: 'NVIDIA H100 80GB HBM3' }] } } as unknown as HostRecord;
const poll = (util: number | null, usedMiB: number | null) => ({ 'utilization.gpu': util, 'memory.used': usedMiB, 'memory.total': 81559, 'temperature.gpu': 40, 'power.draw': null });

describe('usageOf', () => {
  it('a percentage becomes a ratio and MiB bytes; what cannot be is null', () => {
    expect(usageOf(poll(50, 1024))).toEqual({ utilization: 0.5, memoryUsedBytes: 1024 ** 3, memoryTotalBytes: 81559 * 1024 ** 2, temperatureC: 40, powerWatts: null });
    expect(usageOf({ 'utilization.gpu': 101, 'memory.used': -1, 'memory.total': 0 })).toEqual({ utilization: null, memoryUsedBytes: null, memoryTotalBytes: null, temperatureC: null, powerWatts: null });
  });
});

describe('GpuUsageHistory', () => {
  it('folds polls into buckets of the window: mean, max and last; empty buckets are nulls', () => {
    const h = new GpuUsageHistory(() => T0);
    h.sampling('h1', true);
    // what it records is returned, in the order given (the GPU watcher passes it on to the gauges)
    expect(h.record('h1', [{ uuid: 'GPU-a', values: poll(20, 100) }], T0 + 1_000)).toEqual([usageOf(poll(20, 100))]);
    h.record('h1', [{ uuid: 'GPU-a', values: poll(60, 300) }], T0 + 6_000);
    h.record('h1', [{ uuid: 'GPU-a', values: poll(null, 200) }], T0 + 12_000); // [N/A] utilisation: not a 0
    const [a, b] = h.query(host, { from: T0, to: T0 + 30_000, step: 10_000 });
    expect(a!.index).toBe(0);
    expect(b).toMatchObject({ index: 1, uuid: 'GPU-b', current: null });
    expect(b!.buckets.map((x) => x.samples)).toEqual([0, 0, 0]);
    expect(a!.buckets).toHaveLength(3);
    expect(a!.buckets[0]).toMatchObject({ start: '2026-01-01T00:00:00.000Z', samples: 2, utilization: { mean: 0.4, max: 0.6, last: 0.6 }, memoryUsedBytes: { mean: 200 * 1024 ** 2, max: 300 * 1024 ** 2, last: 300 * 1024 ** 2 }, powerWatts: null });
    expect(a!.buckets[1]).toMatchObject({ samples: 1, utilization: null, memoryUsedBytes: { last: 200 * 1024 ** 2 } });
    expect(a!.buckets[2]).toEqual({ start: '2026-01-01T00:00:20.000Z', samples: 0, utilization: null, memoryUsedBytes: null, memoryTotalBytes: null, temperatureC: null, powerWatts: null });
    expect(a!.current).toEqual({ at: '2026-01-01T00:00:12.000Z', utilization: null, memoryUsedBytes: 200 * 1024 ** 2, memoryTotalBytes: 81559 * 1024 ** 2, temperatureC: 40, powerWatts: null });
    // one bucket over the whole window
    expect(h.query(host, { from: T0, to: T0 + 30_000, step: 30_000 })[0]!.buckets[0]).toMatchObject({ samples: 3, utilization: { mean: 0.4, max: 0.6, last: 0.6 } });
  });

  it('says whether this replica samples the host now; the history stays when it stops', () => {
    const h = new GpuUsageHistory(() => T0);
    h.sampling('h1', true);
    h.record('h1', [{ uuid: 'GPU-a', values: poll(70, 10) }], T0);
    expect(h.isSampling('h1')).toBe(true);
    h.sampling('h1', false);
    expect(h.isSampling('h1')).toBe(false);
    expect(h.query(host, { from: T0, to: T0 + 10_000, step: 10_000 })[0]!.current?.utilization).toBe(0.7);
  });

  it('keeps 24 hours', () => {
    const h = new GpuUsageHistory(() => T0);
    h.record('h1', [{ uuid: 'GPU-a', values: poll(10, 10) }], T0);
    const later = T0 + 24 * 3600_000 + 120_000;
    h.record('h1', [{ uuid: 'GPU-b', values: poll(10, 10) }], later);
    const [a] = h.query(host, { from: T0, to: T0 + 10_000, step: 10_000 });
    expect(a!.buckets[0]!.samples).toBe(0);
    expect(a!.current).toBeNull();
  });
});
