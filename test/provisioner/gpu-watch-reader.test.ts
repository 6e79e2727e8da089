// The watch session's lines to observations, pure (docs/gpu-health.md): pre-watch lines are not live,
// dmesg's ring buffer read again is passed over up to the stored position, journald boot ids compare
// with /proc's, counters start from a baseline, a GPU no longer listed and a failed nvidia-smi are
// incidents once, bus ids map by NVRM GPU-at lines, a line no GPU matches is dropped after a poll.
import { describe, expect, it } from 'vitest';
import type { HostGpu } from '../../model/index.ts';
import { GpuWatchReader } from '../../provisioner/gpu-watch-reader.ts';

const gpus: HostGpu[] = [
  { index: 0, uuid: 'GPU-aaaa', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'x' },
  { index: 1, uuid: 'GPU-bbbb', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'x' },
];
const F = 'pci.bus_id,uuid,ecc.errors.uncorrected.volatile.total,remapped_rows.pending';
const poll = (r: GpuWatchReader, n: number, rows: string[], rc = 0) => {
  for (const l of [`P ${n} ${rc}`, ...rows.map((x) => `Q ${x}`), `Z ${n}`]) r.stderr(l);
};
const healthy = ['00000000:18:00.0, GPU-aaaa, 0, No', '00000000:28:00.0, GPU-bbbb, 0, No'];
const subjects = (r: GpuWatchReader) => (r.drain()?.observations ?? []).map((o) => `${o.uuid} ${o.observation.xid ?? o.observation.counter} ${o.observation.live ? 'live' : 'old'}`);

function started(): GpuWatchReader {
  const r = new GpuWatchReader(undefined, gpus, () => 't');
  r.stdout('@@start 43930928-54a0-4b36-a7ae-bce561722870 100.50');
  r.stderr(`F ${F}`);
  r.stderr('G -');
  return r;
}

describe('GpuWatchReader', () => {
  it('a line before the first read is not live; one after is; both wait for a poll to know the GPU', () => {
    const r = started();
    r.stdout('<3>[  100.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.');
    r.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:28:00): 48, pid=2, DBE.');
    r.stdout('<3>[  101.500000] NVRM: Xid (PCI:0000:99:00): 79, pid=3, a GPU this host record lacks');
    poll(r, 1, healthy);
    expect(subjects(r)).toEqual(['GPU-aaaa 79 old', 'GPU-bbbb 48 live']);
    expect(r.stats).toMatchObject({ kernelLines: 3, driverLines: 3, polls: 1, unmatchedLines: 1 });
  });

  it('dmesg read again after a restart: nothing up to the stored position counts twice', () => {
    const r = started();
    r.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.');
    poll(r, 1, healthy);
    const saved = r.drain(true)!.watch;
    expect(saved).toMatchObject({ source: 'dmesg', bootId: '4393092854a04b36a7aebce561722870', monotonicUs: 101_000_000, firstReadMonotonicUs: 100_500_000 });
    const again = new GpuWatchReader(saved, gpus.map((g, i) => ({ ...g, busId: i === 0 ? '00000000:18:00.0' : '00000000:28:00.0' })), () => 't2');
    again.stdout('@@start 4393092854a04b36a7aebce561722870 200.0');
    again.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.');
    again.stdout('<3>[  150.000000] NVRM: Xid (PCI:0000:18:00): 79, written while the control plane was down');
    expect(subjects(again)).toEqual(['GPU-aaaa 79 live']);
  });

  it('dmesg lines that share a timestamp each count once, live and after a restart', () => {
    const r = started();
    r.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.');
    r.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:28:00): 79, GPU has fallen off the bus.');
    poll(r, 1, healthy);
    const batch = r.drain(true)!;
    expect(batch.observations.map((o) => `${o.uuid} ${o.observation.xid} ${o.observation.live}`)).toEqual(['GPU-aaaa 79 true', 'GPU-bbbb 79 true']);
    const saved = batch.watch;
    expect(saved).toMatchObject({ monotonicUs: 101_000_000, linesAtMonotonic: 2 });
    const again = new GpuWatchReader(saved, gpus.map((g, i) => ({ ...g, busId: i === 0 ? '00000000:18:00.0' : '00000000:28:00.0' })), () => 't2');
    again.stdout('@@start 4393092854a04b36a7aebce561722870 200.0');
    again.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.');
    again.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:28:00): 79, GPU has fallen off the bus.');
    again.stdout('<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 48, a third line at that time, new');
    expect(subjects(again)).toEqual(['GPU-aaaa 48 live']);
  });

  it('journald: boot ids without dashes compare with /proc\'s; the cursor is kept', () => {
    const r = started();
    r.stdout(JSON.stringify({ __CURSOR: 's=x;i=5', _BOOT_ID: '4393092854a04b36a7aebce561722870', _SOURCE_MONOTONIC_TIMESTAMP: '90000000', MESSAGE: 'NVRM: Xid (PCI:0000:18:00): 79, old' }));
    r.stdout(JSON.stringify({ __CURSOR: 's=x;i=6', _BOOT_ID: '4393092854a04b36a7aebce561722870', _SOURCE_MONOTONIC_TIMESTAMP: '110000000', MESSAGE: 'NVRM: Xid (PCI:0000:18:00): 74, new' }));
    poll(r, 1, healthy);
    const b = r.drain()!;
    expect(b.observations.map((o) => `${o.observation.xid} ${o.observation.live}`)).toEqual(['79 false', '74 true']);
    expect(b.watch).toMatchObject({ source: 'journal', cursor: 's=x;i=6' });
  });

  it('an NVRM GPU-at line maps a bus id before any poll (nvidia-smi may no longer answer)', () => {
    const r = started();
    r.stdout('<6>[  120.000000] NVRM: GPU at PCI:0000:28:00: GPU-bbbb');
    r.stdout('<3>[  120.100000] NVRM: Xid (PCI:0000:28:00): 79, GPU has fallen off the bus.');
    expect(subjects(r)).toEqual(['GPU-bbbb 79 live']);
  });

  it('counters: the first value is a baseline, a rise counts once, a set state counts on the change', () => {
    const r = started();
    poll(r, 1, ['00000000:18:00.0, GPU-aaaa, 2, No', '00000000:28:00.0, GPU-bbbb, 0, Yes']);
    expect(subjects(r)).toEqual(['GPU-bbbb remapped_rows.pending old']);
    poll(r, 2, ['00000000:18:00.0, GPU-aaaa, 2, No', '00000000:28:00.0, GPU-bbbb, 0, Yes']);
    expect(r.drain()).toBeNull();
    poll(r, 3, ['00000000:18:00.0, GPU-aaaa, 5, [N/A]', '00000000:28:00.0, GPU-bbbb, 0, No']);
    expect(subjects(r)).toEqual(['GPU-aaaa ecc.errors.uncorrected.volatile.total live']);
  });

  it('a GPU no longer listed, and nvidia-smi failing, are incidents once per streak', () => {
    const r = started();
    poll(r, 1, healthy);
    r.drain();
    poll(r, 2, [healthy[0]!]);
    poll(r, 3, [healthy[0]!]);
    expect(subjects(r)).toEqual(['GPU-bbbb gpu.missing live']);
    poll(r, 4, ['Unable to determine the device handle for GPU0000:28:00.0: Unknown Error'], 15);
    poll(r, 5, [], 124);
    expect(subjects(r)).toEqual(['GPU-aaaa nvidia-smi.failed live', 'GPU-bbbb nvidia-smi.failed live']);
    expect(r.stats.pollFailures).toBe(2);
  });
});
