// GPU health by the table, pure: application Xids change nothing, unknown ones warn, the failures
// fail; repeats count up; a diagnostic resolves; a refresh keeps what was known and a GPU gone in FAILURE.
import { describe, expect, it } from 'vitest';
import type { HostGpu } from '../../../model/records/host.ts';
import { classify, healthOf, incidentLiveSince, mergeProbedGpus, recordObservation, resolveIncidents, GPU_INCIDENTS_KEPT } from '../../../model/rules/gpu-health.ts';
import { COUNTER_TABLE, XID_TABLE, GPU_HEALTH_TABLE_VERSION } from '../../../model/rules/gpu-health-table.ts';

const gpu = (index: number, extra: Partial<HostGpu> = {}): HostGpu => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'NVIDIA H100 80GB HBM3', ...extra });
const xid = (n: number, live = true, at = '2026-11-26T14:00:00.000Z') => ({ kind: 'xid' as const, xid: n, live, detail: 'text', at });

describe('the classification table', () => {
  it('is versioned, and every row names its sources', () => {
    expect(GPU_HEALTH_TABLE_VERSION).toBeGreaterThanOrEqual(1);
    for (const r of XID_TABLE) expect(r.sources.nvidia && r.sources.dp && r.sources.aws).toBeTruthy();
    for (const r of COUNTER_TABLE) expect(r.source.length).toBeGreaterThan(10);
    expect(new Set(XID_TABLE.map((r) => r.xid)).size).toBe(XID_TABLE.length);
  });
  it('application Xids (13, 31, 43, 45, 68) change nothing', () => {
    for (const n of [13, 31, 43, 45, 68]) {
      expect(classify(xid(n))).toBeNull();
      expect(recordObservation(gpu(0), xid(n))).toEqual({ gpu: gpu(0), incident: null, opened: false });
    }
  });
  it('48, 64, 74, 79, 95, 109, 119, 120 are FAILURE; 63, 92, 94 WARNING; an unknown Xid WARNING', () => {
    for (const n of [48, 64, 74, 79, 95, 109, 119, 120]) expect(classify(xid(n))?.health, `Xid ${n}`).toBe('FAILURE');
    for (const n of [63, 92, 94]) expect(classify(xid(n))?.health, `Xid ${n}`).toBe('WARNING');
    expect(classify(xid(9999))).toMatchObject({ health: 'WARNING', mnemonic: 'UNKNOWN_XID' });
    expect(classify(xid(79))).toMatchObject({ mnemonic: 'GPU_HAS_FALLEN_OFF_THE_BUS', action: 'RESTART_BM' });
  });
  it('ECC and remap counters by the table', () => {
    const c = (counter: string) => classify({ kind: 'counter', counter, live: true, detail: '0 → 1', at: 'x' })?.health;
    expect(c('ecc.errors.uncorrected.volatile.total')).toBe('FAILURE');
    expect(c('remapped_rows.failure')).toBe('FAILURE');
    expect(c('remapped_rows.pending')).toBe('WARNING');
    expect(c('gpu.missing')).toBe('FAILURE');
    expect(c('temperature.gpu')).toBeUndefined();
  });
});

describe('a GPU\'s incidents', () => {
  it('a repeat counts up the open incident; health is the worst open one; live sticks once seen live', () => {
    let g = recordObservation(gpu(0), xid(94, true, 't1')).gpu;
    expect(g.health).toBe('WARNING');
    const r = recordObservation(g, xid(79, false, 't2'));
    expect(r).toMatchObject({ opened: true, incident: { xid: 79, live: false, count: 1 } });
    g = recordObservation(r.gpu, xid(79, true, 't3')).gpu;
    expect(g.health).toBe('FAILURE');
    expect(g.incidents).toMatchObject([{ xid: 94 }, { xid: 79, count: 2, firstSeen: 't2', lastSeen: 't3', live: true, resolvedAt: null }]);
  });
  it('liveSince: a pre-watch incident repeated live becomes live at the repeat\'s time; firstSeen stays', () => {
    const pre = recordObservation(gpu(0), xid(79, false, '2026-11-20T08:00:00.000Z'));
    expect(pre.incident).toMatchObject({ live: false, liveSince: null, firstSeen: '2026-11-20T08:00:00.000Z' });
    const live = recordObservation(pre.gpu, xid(79, true, '2026-11-26T14:00:00.000Z'));
    expect(live).toMatchObject({ opened: false, incident: { live: true, count: 2, firstSeen: '2026-11-20T08:00:00.000Z', liveSince: '2026-11-26T14:00:00.000Z', lastSeen: '2026-11-26T14:00:00.000Z' } });
    // a later repeat, live or pre-watch, keeps the time it became live
    const again = recordObservation(live.gpu, xid(79, true, '2026-11-26T15:00:00.000Z'));
    expect(again.incident).toMatchObject({ liveSince: '2026-11-26T14:00:00.000Z', lastSeen: '2026-11-26T15:00:00.000Z', count: 3 });
    // opened live: live from its first observation
    expect(recordObservation(gpu(1), xid(79, true, 't5')).incident).toMatchObject({ firstSeen: 't5', liveSince: 't5' });
    // a record from before the field: firstSeen when live, else null
    expect(incidentLiveSince({ live: true, firstSeen: 'old' })).toBe('old');
    expect(incidentLiveSince({ live: false, firstSeen: 'old' })).toBeNull();
  });
  it('resolving closes every open incident and the GPU is HEALTHY; a new one opens afresh', () => {
    const g = resolveIncidents(recordObservation(gpu(0), xid(79)).gpu, 't9');
    expect(g.health).toBe('HEALTHY');
    expect(g.incidents).toMatchObject([{ xid: 79, resolvedAt: 't9' }]);
    expect(recordObservation(g, xid(79, true, 't10'))).toMatchObject({ opened: true, gpu: { health: 'FAILURE' } });
    expect(healthOf(undefined)).toBe('HEALTHY');
  });
  it(`keeps every open incident and at most ${GPU_INCIDENTS_KEPT} in all`, () => {
    let g = gpu(0);
    for (let i = 0; i < 30; i++) g = resolveIncidents(recordObservation(g, xid(1000 + i)).gpu, `r${i}`);
    g = recordObservation(g, xid(79)).gpu;
    expect(g.incidents).toHaveLength(GPU_INCIDENTS_KEPT);
    expect(g.incidents!.at(-1)).toMatchObject({ xid: 79, resolvedAt: null });
  });
});

describe('a refresh never drops a failed GPU', () => {
  it('keeps health, incidents and bus id by uuid; a GPU no longer listed stays in FAILURE', () => {
    const known = [recordObservation(gpu(0, { busId: '00000000:18:00.0' }), xid(94)).gpu, gpu(1)];
    const merged = mergeProbedGpus(known, [gpu(0)], 't5');
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({ uuid: 'GPU-0', health: 'WARNING', busId: '00000000:18:00.0' });
    expect(merged[1]).toMatchObject({ uuid: 'GPU-1', health: 'FAILURE', incidents: [{ counter: 'gpu.missing', live: true }] });
  });
});

describe('docs/gpu-health.md shows the table as it is', () => {
  it('every Xid and counter row, with gpufleet\'s health and action', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../../docs/gpu-health.md', import.meta.url), 'utf8');
    expect(doc).toContain(`**version ${GPU_HEALTH_TABLE_VERSION}**`);
    for (const r of XID_TABLE) expect(doc, `Xid ${r.xid}`).toContain(`| ${r.xid} | ${r.mnemonic} | ${r.health === 'APPLICATION' ? 'no change' : r.health} | ${r.action} |`);
    for (const r of COUNTER_TABLE) expect(doc, r.counter).toContain(`| \`${r.counter}\` | ${r.trigger === 'rise' ? 'rises' : 'becomes set'} | ${r.mnemonic} | ${r.health} | ${r.action} |`);
  });
});
