// The GPU watcher's parsers, pure: bus ids, kernel lines (Xid, GPU-at, fallen off the bus; journald
// JSON, dmesg --raw), nvidia-smi health CSV ([N/A] is no counter), on real output from an H100; the
// utilisation and memory fields read strictly (docs/gpu-metrics.md).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atOrBefore, busKey, parseDmesgLine, parseDriverLine, parseHealthCsv, parseJournalLine, sameBus, smiValue, usageValue } from '../../fleet/index.ts';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/gpu-health');

describe('bus ids: kernel PCI:dddd:bb:dd and nvidia-smi dddddddd:BB:DD.F name one GPU', () => {
  it('maps by domain, bus and device, in any case', () => {
    expect(sameBus('PCI:0000:3b:00', '00000000:3B:00.0')).toBe(true);
    expect(sameBus('0000:3B:00', '00000000:3b:00.0')).toBe(true);
    expect(busKey('00000000:00:06.0')).toBe('0:0:6');
    expect(sameBus('PCI:0000:3b:00', '00000000:3C:00.0')).toBe(false);
    expect(sameBus('PCI:0001:3b:00', '00000000:3B:00.0')).toBe(false);
    expect(busKey('GPU-1234')).toBeNull();
  });
});

describe('kernel lines', () => {
  it('reads an Xid line in both forms, and the detail after pid/name', () => {
    expect(parseDriverLine('NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.')).toEqual({ kind: 'xid', pci: '0000:3b:00', xid: 79, detail: 'GPU has fallen off the bus.' });
    expect(parseDriverLine('NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.')).toMatchObject({ xid: 79, pci: '0000:2b:00' });
    expect(parseDriverLine('NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.')).toMatchObject({ xid: 63, detail: 'Row Remapper: New row marked for remapping, reset gpu to activate.' });
    expect(parseDriverLine("NVRM: Xid (PCI:0000:18:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x404600=0x80000002")).toMatchObject({ xid: 13 });
  });
  it('reads the GPU-at line that maps a bus id to a uuid, and a fallen-off line without an Xid', () => {
    expect(parseDriverLine('NVRM: GPU at PCI:0000:3b:00: GPU-b356eef1-1035-106a-88eb-616b58321152')).toEqual({ kind: 'gpu-at', pci: '0000:3b:00', uuid: 'GPU-b356eef1-1035-106a-88eb-616b58321152' });
    expect(parseDriverLine('NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.')).toMatchObject({ kind: 'fallen-off', pci: '0000:3b:00.0' });
  });
  it('ignores every other line, the real H100 boot log among them', () => {
    const lines = readFileSync(`${FIXTURES}/dmesg-boot.txt`, 'utf8').split('\n');
    expect(lines.length).toBeGreaterThan(150);
    expect(lines.map((l) => parseDriverLine(parseDmesgLine(l).text)).filter((x) => x !== null)).toEqual([]);
  });
  it('journald JSON: text, boot, monotonic time and cursor; MESSAGE as bytes too', () => {
    const j = parseJournalLine(JSON.stringify({ __CURSOR: 's=ab;i=1f', _BOOT_ID: 'b1', _SOURCE_MONOTONIC_TIMESTAMP: '12345678', __MONOTONIC_TIMESTAMP: '12345999', MESSAGE: 'NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.' }));
    expect(j).toEqual({ text: 'NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.', bootId: 'b1', monotonicUs: 12345678, cursor: 's=ab;i=1f' });
    expect(parseJournalLine(JSON.stringify({ MESSAGE: [...Buffer.from('NVRM: x')] }))?.text).toBe('NVRM: x');
    expect(parseJournalLine('not json')).toBeNull();
  });
  it('dmesg --raw: priority, monotonic µs, text; positions compare within one boot', () => {
    const d = parseDmesgLine('<4>[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.');
    expect(d).toMatchObject({ monotonicUs: 123_456_789, text: 'NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.' });
    expect(parseDmesgLine('<6>no timestamp').monotonicUs).toBeNull();
    expect(atOrBefore({ bootId: 'a', monotonicUs: 5 }, { bootId: 'a', monotonicUs: 5 })).toBe(true);
    expect(atOrBefore({ bootId: 'a', monotonicUs: 6 }, { bootId: 'a', monotonicUs: 5 })).toBe(false);
    expect(atOrBefore({ bootId: 'b', monotonicUs: 1 }, { bootId: 'a', monotonicUs: 5 })).toBe(false);
  });
});

describe('nvidia-smi health CSV', () => {
  it('reads the real H100 answer: [N/A] is no counter, No is 0, hex masks are numbers', () => {
    const fields = ['pci.bus_id', 'uuid', 'name', 'ecc.errors.uncorrected.volatile.total', 'ecc.errors.uncorrected.aggregate.total', 'retired_pages.pending', 'remapped_rows.pending', 'remapped_rows.failure', 'temperature.gpu', 'power.draw', 'clocks_throttle_reasons.active'];
    const [s] = parseHealthCsv(readFileSync(`${FIXTURES}/query.csv`, 'utf8'), fields);
    expect(s).toEqual({
      busId: '00000000:00:06.0',
      uuid: 'GPU-b356eef1-1035-106a-88eb-616b58321152',
      values: {
        name: null,
        'ecc.errors.uncorrected.volatile.total': 0,
        'ecc.errors.uncorrected.aggregate.total': 0,
        'retired_pages.pending': null,
        'remapped_rows.pending': 0,
        'remapped_rows.failure': 0,
        'temperature.gpu': 35,
        'power.draw': 70.77,
        'clocks_event_reasons.active': 1,
      },
    });
  });
  it('reads the real --query-remapped-rows answer by gpu_bus_id', () => {
    const [s] = parseHealthCsv(readFileSync(`${FIXTURES}/remapped.csv`, 'utf8'), ['gpu_bus_id', 'gpu_uuid', 'remapped_rows.correctable', 'remapped_rows.uncorrectable', 'remapped_rows.pending', 'remapped_rows.failure']);
    expect(s).toMatchObject({ busId: '00000000:00:06.0', values: { 'remapped_rows.pending': 0, 'remapped_rows.failure': 0 } });
  });
  it('N/A in any spelling is no counter, never an error; a row that does not fit is skipped', () => {
    for (const v of ['N/A', '[N/A]', '[Not Supported]', '[Unknown Error]', '', 'n/a']) expect(smiValue(v)).toBeNull();
    expect(smiValue('Yes')).toBe(1);
    expect(smiValue('Not Active')).toBe(0);
    expect(parseHealthCsv('00000000:18:00.0, GPU-x, 1\nUnable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n', ['pci.bus_id', 'uuid', 'ecc.errors.uncorrected.volatile.total'])).toEqual([
      { busId: '00000000:18:00.0', uuid: 'GPU-x', values: { 'ecc.errors.uncorrected.volatile.total': 1 } },
    ]);
  });
});

describe('nvidia-smi utilisation and memory (docs/gpu-metrics.md)', () => {
  it('reads utilization.gpu, memory.used and memory.total as plain numbers, with or without units', () => {
    const fields = ['pci.bus_id', 'uuid', 'utilization.gpu', 'memory.used', 'memory.total', 'temperature.gpu', 'power.draw'];
    expect(parseHealthCsv('00000000:18:00.0, GPU-a, 87, 40213, 81559, 61, 402.17\n00000000:28:00.0, GPU-b, 12 %, 1 MiB, 81559 MiB, 33, 71.02 W\n', fields)).toEqual([
      { busId: '00000000:18:00.0', uuid: 'GPU-a', values: { 'utilization.gpu': 87, 'memory.used': 40213, 'memory.total': 81559, 'temperature.gpu': 61, 'power.draw': 402.17 } },
      { busId: '00000000:28:00.0', uuid: 'GPU-b', values: { 'utilization.gpu': 12, 'memory.used': 1, 'memory.total': 81559, 'temperature.gpu': 33, 'power.draw': 71.02 } },
    ]);
  });
  it('[N/A] and anything that is not a plain number is no value, never 0 (no Yes/No, hex or units of another field)', () => {
    for (const v of ['[N/A]', 'N/A', '[Not Supported]', '[Unknown Error]', '', 'Yes', 'Active', '0x1', '1e3', '12 W%', '12abc', ' - ', 'Infinity', 'NaN']) expect(usageValue(v), v).toBeNull();
    expect(usageValue('0')).toBe(0);
    expect(usageValue(' 100 ')).toBe(100);
    const [s] = parseHealthCsv('00000000:18:00.0, GPU-a, [N/A], [N/A], 81559, [N/A], [Not Supported]\n', ['pci.bus_id', 'uuid', 'utilization.gpu', 'memory.used', 'memory.total', 'temperature.gpu', 'power.draw']);
    expect(s!.values).toEqual({ 'utilization.gpu': null, 'memory.used': null, 'memory.total': 81559, 'temperature.gpu': null, 'power.draw': null });
  });
});
