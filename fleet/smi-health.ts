// nvidia-smi's health fields as the GPU watcher polls them (docs/gpu-health.md):
// `--query-gpu=<fields> --format=csv,noheader,nounits` and, where `--query-gpu` lacks the remapped
// rows, `--query-remapped-rows=gpu_bus_id,remapped_rows.pending,remapped_rows.failure`. A value of
// `N/A`, `[N/A]`, `[Not Supported]` or any other bracketed word means "no counter", never an error.

/** The fields asked for, in the order tried; the watch script keeps those the driver offers (`--help-query-gpu`). */
export const HEALTH_FIELDS = [
  'ecc.errors.uncorrected.volatile.total',
  'ecc.errors.uncorrected.aggregate.total',
  'retired_pages.pending',
  'remapped_rows.pending',
  'remapped_rows.failure',
  'temperature.gpu',
  'power.draw',
  'clocks_event_reasons.active',
  'clocks_event_reasons.hw_thermal_slowdown',
  'clocks_event_reasons.hw_power_brake_slowdown',
] as const;

/**
 * What the GPU watcher also reads for the utilisation and memory charts (docs/gpu-metrics.md), kept
 * like the health fields where the driver offers them; `temperature.gpu` and `power.draw` are health
 * fields already. Parsed strictly (usageValue): a plain decimal number or no value.
 */
export const USAGE_FIELDS = ['utilization.gpu', 'memory.used', 'memory.total'] as const;

/** the fields read as plain numbers (never Yes/No or bit masks) */
const NUMERIC_FIELDS: ReadonlySet<string> = new Set([...USAGE_FIELDS, 'temperature.gpu', 'power.draw']);

/** the fields every query starts with: they name the GPU */
export const ID_FIELDS = ['pci.bus_id', 'uuid'] as const;
export const REMAPPED_FIELDS = ['gpu_bus_id', 'remapped_rows.pending', 'remapped_rows.failure'] as const;

/** Older drivers name the clock reasons `clocks_throttle_reasons.*`; `--query-remapped-rows` names ids `gpu_*`. */
export function canonicalField(name: string): string {
  if (name.startsWith('clocks_throttle_reasons.')) return `clocks_event_reasons.${name.slice('clocks_throttle_reasons.'.length)}`;
  if (name === 'gpu_bus_id') return 'pci.bus_id';
  if (name === 'gpu_uuid') return 'uuid';
  return name;
}

/** A value as a number: counts, Yes/No and Active/Not Active (1/0), hex bit masks; null for "no counter". */
export function smiValue(raw: string | undefined): number | null {
  const v = (raw ?? '').trim();
  if (v === '' || /^\[.*\]$/.test(v) || /^(N\/A|Not Supported|Unknown Error)$/i.test(v)) return null;
  if (/^(yes|active|enabled)$/i.test(v)) return 1;
  if (/^(no|not active|disabled)$/i.test(v)) return 0;
  if (/^0x[0-9a-f]+$/i.test(v)) return Number(BigInt(v));
  const n = Number(v.replace(/\s*(W|C|MiB|%)$/i, ''));
  return Number.isFinite(n) ? n : null;
}

/**
 * A numeric field's value, strictly: a plain decimal number (`42`, `71.02`, `-3` for a temperature),
 * an optional unit of that field when units were not turned off; anything else, `[N/A]` and
 * `[Not Supported]` included, is no value (null), never 0.
 */
export function usageValue(raw: string | undefined): number | null {
  const m = /^(-?\d{1,12}(?:\.\d{1,6})?)(?: ?(?:%|MiB|W|C))?$/.exec((raw ?? '').trim());
  return m ? Number(m[1]) : null;
}

export interface GpuSample {
  busId: string;
  uuid: string | null;
  /** canonical field → value (null: the driver has no such counter for this GPU) */
  values: Record<string, number | null>;
}

/** Rows of a `--format=csv,noheader,nounits` answer for `fields`; lines that do not fit are skipped. */
export function parseHealthCsv(csv: string, fields: readonly string[]): GpuSample[] {
  const names = fields.map(canonicalField);
  const out: GpuSample[] = [];
  for (const line of csv.split('\n')) {
    if (line.trim() === '') continue;
    const cols = line.split(',').map((c) => c.trim());
    if (cols.length !== names.length) continue;
    const row = new Map(names.map((n, i) => [n, cols[i]!]));
    const busId = row.get('pci.bus_id');
    if (!busId || !/^[0-9a-f]+:[0-9a-f]+:[0-9a-f]+\.[0-7]$/i.test(busId)) continue;
    const values: Record<string, number | null> = {};
    for (const n of names) if (n !== 'pci.bus_id' && n !== 'uuid') values[n] = NUMERIC_FIELDS.has(n) ? usageValue(row.get(n)) : smiValue(row.get(n));
    out.push({ busId, uuid: row.get('uuid') ?? null, values });
  }
  return out;
}
