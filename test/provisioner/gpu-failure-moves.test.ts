// Where a GPU-failure move stops billing (moveSince): when the failing incident became live, not
// when the watcher first read a pre-watch line of it (docs/gpu-health.md "Failed GPUs").
import { describe, expect, it } from 'vitest';
import { recordObservation, type HostGpu } from '../../model/index.ts';
import { liveFailure, moveSince } from '../../provisioner/gpu-failure-moves.ts';

const gpu: HostGpu = { index: 0, uuid: 'GPU-0', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'NVIDIA H100 80GB HBM3' };
const xid79 = (live: boolean, at: string) => ({ kind: 'xid' as const, xid: 79, live, detail: 'GPU has fallen off the bus.', at });

describe('a GPU-failure move\'s billing stop (moveSince)', () => {
  it('a pre-watch Xid 79 read days ago, then a live one: not acted on before, then since the live one', () => {
    const pre = recordObservation(gpu, xid79(false, '2026-11-20T08:00:00.000Z')).gpu;
    expect(liveFailure(pre)).toBeNull();
    const g = recordObservation(pre, xid79(true, '2026-11-26T14:00:00.000Z')).gpu;
    const i = liveFailure(g)!;
    expect(i.firstSeen).toBe('2026-11-20T08:00:00.000Z');
    expect(moveSince(i)).toBe('2026-11-26T14:00:00.000Z');
  });
  it('an incident opened live: since its first observation; a stored one from before liveSince: its firstSeen', () => {
    const i = liveFailure(recordObservation(gpu, xid79(true, '2026-11-26T14:00:00.000Z')).gpu)!;
    expect(moveSince(i)).toBe('2026-11-26T14:00:00.000Z');
    const { liveSince: _, ...old } = i;
    expect(moveSince(old)).toBe('2026-11-26T14:00:00.000Z');
  });
});
