// A strict parser of the Prometheus text exposition format (version 0.0.4), for tests that read
// GET /metrics: every line must be a comment, a HELP or TYPE line, or a sample; a malformed line,
// a sample of a family with no TYPE, or a duplicate series throws. Values are numbers (+Inf, NaN).
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/;

/** As Prometheus reads a value (Go's ParseFloat): Inf and NaN in any case (prom-client writes `Nan`). */
function parseValue(v: string, line: string): number {
  if (/^\+?inf$/i.test(v)) return Infinity;
  if (/^-inf$/i.test(v)) return -Infinity;
  if (/^nan$/i.test(v)) return NaN;
  if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) throw new Error(`bad sample value in: ${line}`);
  return Number(v);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    if (!m) throw new Error(`bad labels in: ${line}`);
    if (Object.hasOwn(labels, m[1]!)) throw new Error(`label ${m[1]} twice in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(["\\n])/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(m[0].length);
  }
  return labels;
}

/** The family a sample belongs to: histogram and summary samples carry a suffix. */
function familyOf(name: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || f.type === 'summary')) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!new RegExp(`^${NAME}$`).test(name!)) throw new Error(`bad metric name in: ${line}`);
      const f = families.get(name!) ?? { name: name!, type: 'untyped' as const, help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest!)) throw new Error(`bad type in: ${line}`);
        f.type = rest as MetricFamily['type'];
      } else f.help = rest!;
      families.set(name!, f);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const family = familyOf(m[1]!, families);
    if (!family) throw new Error(`sample before its # TYPE line: ${line}`);
    const labels = m[2] ? parseLabels(m[2], line) : {};
    const key = `${m[1]}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    family.samples.push({ name: m[1]!, labels, value: parseValue(m[3]!, line) });
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; throws when none or several match. */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const matches = samplesOf(families, name, labels);
  if (matches.length !== 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matches[0]!.value;
}

export function samplesOf(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): Sample[] {
  const family = familyOf(name, families);
  return (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
