// The diagnostic's verdicts, pure: dcgmi diag's JSON (a failed test on one GPU, or on all), an answer
// that is no JSON, and gpufleet's driver check (listed twice, ECC stable, nothing pending).
import { describe, expect, it } from 'vitest';
import { dcgmiFailures, diagnosticOutcome, diagnosticScript } from '../../fleet/gpu-diagnostic.ts';

const gpus = [{ uuid: 'GPU-a', index: 0 }, { uuid: 'GPU-b', index: 1 }];
const dcgmi = (results: unknown[]) => JSON.stringify({ 'DCGM GPU Diagnostic': { test_categories: [{ category: 'Hardware', tests: [{ name: 'GPU Memory', results }] }] } });

describe('dcgmi diag', () => {
  it('a Fail on GPU 1 fails GPU 1 only, with the test and its warning', () => {
    const out = `@@method dcgmi\n${dcgmi([{ gpu_id: '0', status: 'Pass' }, { gpu_id: '1', status: 'Fail', warnings: [{ warning: 'DBE detected' }] }])}\n@@rc 226`;
    const o = diagnosticOutcome(out, gpus);
    expect(o.method).toBe('dcgmi');
    expect(o.verdicts.get('GPU-a')).toEqual({ passed: true, summary: 'every dcgmi diag test passed' });
    expect(o.verdicts.get('GPU-b')).toEqual({ passed: false, summary: 'dcgmi diag failed: GPU Memory (DBE detected)' });
  });
  it('a Fail without a GPU id fails every GPU; an answer that is no JSON fails, never passes', () => {
    expect(dcgmiFailures(JSON.parse(dcgmi([{ status: 'Fail' }])))).toEqual([{ gpuId: null, test: 'GPU Memory', detail: '' }]);
    const o = diagnosticOutcome('@@method dcgmi\nError: unable to connect to host engine\n@@rc 255', gpus);
    expect([...o.verdicts.values()].every((v) => !v.passed && v.summary.includes('exit 255'))).toBe(true);
  });
  it('the command names only a level and GPU indexes', () => {
    expect(diagnosticScript({ level: 2, gpuIndexes: [0, 3] })).toContain("dcgmi diag -r 2 -i 0,3 -j");
  });
});

describe('the driver check', () => {
  const frame = (n: number, rows: string[], rc = 0) => [`P ${n} ${rc}`, ...rows.map((r) => `Q ${r}`), `Z ${n}`].join('\n');
  const head = '@@method driver-check\nF pci.bus_id,uuid,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,remapped_rows.pending\nG -\n';
  it('passes a GPU listed twice with stable ECC and nothing pending; fails the others, each with why', () => {
    const out = head + frame(1, ['00000000:18:00.0, GPU-a, 0, 4, No', '00000000:28:00.0, GPU-b, 1, 1, No']) + '\n' + frame(2, ['00000000:18:00.0, GPU-a, 0, 4, No', '00000000:28:00.0, GPU-b, 2, 2, No']);
    const o = diagnosticOutcome(out, [...gpus, { uuid: 'GPU-c', index: 2 }]);
    expect(o.verdicts.get('GPU-a')).toEqual({ passed: true, summary: 'listed by the driver; uncorrected ECC counts stable (0/4) over 2 s; nothing pending' });
    expect(o.verdicts.get('GPU-b')).toEqual({ passed: false, summary: 'ecc.errors.uncorrected.volatile.total moved from 1 to 2 within 2 s' });
    expect(o.verdicts.get('GPU-c')).toEqual({ passed: false, summary: 'the driver does not list this GPU' });
  });
  it('fails on a pending remap and on nvidia-smi failing', () => {
    const pending = head + frame(1, ['00000000:18:00.0, GPU-a, 0, 0, Yes']) + '\n' + frame(2, ['00000000:18:00.0, GPU-a, 0, 0, Yes']);
    expect(diagnosticOutcome(pending, gpus).verdicts.get('GPU-a')).toEqual({ passed: false, summary: 'a row remap is pending (a GPU reset applies it)' });
    const failing = head + frame(1, ['x'], 15) + '\n' + frame(2, ['x'], 15);
    expect(diagnosticOutcome(failing, gpus).verdicts.get('GPU-a')).toEqual({ passed: false, summary: 'nvidia-smi failed (exit 15)' });
  });
});
