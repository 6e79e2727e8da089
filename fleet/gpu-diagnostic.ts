// The GPU diagnostic a failed GPU must pass to return to service (docs/gpu-health.md, "Returning to
// service"): `dcgmi diag -r <1|2> -j` where DCGM is installed, otherwise gpufleet's driver check: the GPU
// is listed by nvidia-smi in two polls 2 s apart, its uncorrected ECC counts do not move between them,
// and nothing is pending (page retirement, row remap) nor failed (row remap). One command, one round trip.
import { shellJoin } from './shell-join.ts';
import { fieldDiscovery, POLL_FRAME } from './gpu-watch-script.ts';
import { PollFrames, type PollFrame } from './smi-frames.ts';

export interface DiagnosticScriptOptions {
  level: 1 | 2;
  /** nvidia-smi indexes of the GPUs to run dcgmi on (DCGM's GPU ids); empty: all */
  gpuIndexes: number[];
}

export function diagnosticScript(o: DiagnosticScriptOptions): string {
  const ids = o.gpuIndexes.length > 0 ? ['-i', o.gpuIndexes.map((i) => String(Math.floor(i))).join(',')] : [];
  return [
    'if command -v dcgmi >/dev/null 2>&1; then',
    '  echo "@@method dcgmi"',
    `  ${shellJoin(['dcgmi', 'diag', '-r', String(o.level), ...ids, '-j'])} 2>&1; echo "@@rc $?"`,
    'else',
    '  echo "@@method driver-check"',
    ...fieldDiscovery(10).map((l) => `  ${l}`),
    '  n=1',
    ...POLL_FRAME.map((l) => `  ${l}`),
    '  sleep 2; n=2',
    ...POLL_FRAME.map((l) => `  ${l}`),
    'fi',
  ].join('\n');
}

export interface GpuVerdict {
  passed: boolean;
  /** our sentence */
  summary: string;
}

export interface DiagnosticOutcome {
  method: 'dcgmi' | 'driver-check';
  /** by GPU uuid */
  verdicts: Map<string, GpuVerdict>;
}

/** What failed in a `dcgmi diag -j` answer: each result whose status is Fail, with its test, GPU id and warnings. */
export function dcgmiFailures(json: unknown): { gpuId: string | null; test: string; detail: string }[] {
  const out: { gpuId: string | null; test: string; detail: string }[] = [];
  const visit = (node: unknown, test: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, test));
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    const name = typeof o['name'] === 'string' && 'results' in o ? o['name'] : test;
    if (typeof o['status'] === 'string' && /^fail/i.test(o['status'])) {
      const warnings = Array.isArray(o['warnings']) ? o['warnings'].map((w) => (w && typeof w === 'object' ? String((w as Record<string, unknown>)['warning'] ?? '') : String(w))) : [];
      out.push({ gpuId: o['gpu_id'] === undefined ? null : String(o['gpu_id']), test: name, detail: warnings.filter(Boolean).join(' ').slice(0, 300) });
    }
    for (const v of Object.values(o)) if (v && typeof v === 'object') visit(v, name);
  };
  visit(json, '');
  return out;
}

/** The poll frames of the driver check's output. */
function frames(lines: string[]): PollFrame[] {
  const f = new PollFrames();
  return lines.map((l) => f.feed(l)).filter((x): x is PollFrame => x !== null);
}

/** The verdict on each of `gpus` (uuid and nvidia-smi index) from the diagnostic command's output and exit. */
export function diagnosticOutcome(output: string, gpus: readonly { uuid: string; index: number }[]): DiagnosticOutcome {
  const lines = output.split('\n').map((l) => l.replace(/\r$/, ''));
  const verdicts = new Map<string, GpuVerdict>();
  if (lines.includes('@@method dcgmi')) {
    const rc = Number(lines.find((l) => l.startsWith('@@rc '))?.slice(5) ?? NaN);
    const jsonText = lines.filter((l) => !l.startsWith('@@')).join('\n');
    let json: unknown = null;
    try {
      json = JSON.parse(jsonText.slice(jsonText.indexOf('{')));
    } catch {
      json = null;
    }
    const failures = json === null ? null : dcgmiFailures(json);
    for (const g of gpus) {
      if (failures === null) {
        verdicts.set(g.uuid, { passed: false, summary: `dcgmi diag gave no result we could read (exit ${Number.isFinite(rc) ? rc : 'unknown'})` });
        continue;
      }
      const mine = failures.filter((f) => f.gpuId === null || f.gpuId === String(g.index));
      verdicts.set(g.uuid, mine.length === 0
        ? { passed: true, summary: 'every dcgmi diag test passed' }
        : { passed: false, summary: `dcgmi diag failed: ${mine.map((f) => `${f.test}${f.detail ? ` (${f.detail})` : ''}`).join('; ')}` });
    }
    return { method: 'dcgmi', verdicts };
  }
  const [a, b] = frames(lines);
  for (const g of gpus) verdicts.set(g.uuid, driverVerdict(g.uuid, a, b));
  return { method: 'driver-check', verdicts };
}

const ECC = ['ecc.errors.uncorrected.volatile.total', 'ecc.errors.uncorrected.aggregate.total'] as const;
const PENDING: [string, string][] = [
  ['retired_pages.pending', 'a page retirement is pending (a GPU reset applies it)'],
  ['remapped_rows.pending', 'a row remap is pending (a GPU reset applies it)'],
  ['remapped_rows.failure', 'a row could not be remapped'],
];

function driverVerdict(uuid: string, a: PollFrame | undefined, b: PollFrame | undefined): GpuVerdict {
  if (!a || !b) return { passed: false, summary: 'nvidia-smi did not answer both polls' };
  if (a.rc !== 0 || b.rc !== 0) return { passed: false, summary: `nvidia-smi failed (exit ${a.rc !== 0 ? a.rc : b.rc})` };
  const first = a.samples.find((s) => s.uuid === uuid);
  const second = b.samples.find((s) => s.uuid === uuid);
  if (!first || !second) return { passed: false, summary: 'the driver does not list this GPU' };
  for (const f of ECC) {
    const x = first.values[f];
    const y = second.values[f];
    if (x !== null && x !== undefined && y !== null && y !== undefined && y !== x) return { passed: false, summary: `${f} moved from ${x} to ${y} within 2 s` };
  }
  for (const [f, why] of PENDING) if (second.values[f] === 1) return { passed: false, summary: why };
  const ecc = ECC.map((f) => second.values[f]).map((v) => (v === null || v === undefined ? 'n/a' : String(v))).join('/');
  return { passed: true, summary: `listed by the driver; uncorrected ECC counts stable (${ecc}) over 2 s; nothing pending` };
}
