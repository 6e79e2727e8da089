// How a resource spec travels through Terraform JSON: canonical JSON (model/base/canonical-json.ts: sorted
// keys, so the synth output and its hash are deterministic), escaped so Terraform treats it as literal
// text, with references to other constructs written `${null_resource.<name>.id}` inside it.
import { createHash } from 'node:crypto';

/**
 * Deep equality over JSON values, insensitive to key order; an absent key equals `undefined`. Plain
 * loops, no closures: a plan of a thousand pods compares tens of thousands of fields.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let nx = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    nx++;
    if (!sameJson(x[k], y[k])) return false;
  }
  let ny = 0;
  for (const k in y) if (y[k] !== undefined) ny++;
  return nx === ny;
}

// Terraform parses every JSON string as a template: `${` and `%{` must be doubled to stay literal.
// The spec is a value for our engine, not for Terraform, so all of it is escaped, references included
// (Terraform orders resources through `depends_on` instead; see constructs/gpufleet-resource.ts).
export function escapeTemplate(s: string): string {
  return s.replace(/\$\{/g, () => '$${').replace(/%\{/g, () => '%%{');
}

export function unescapeTemplate(s: string): string {
  return s.replace(/\$\$\{/g, () => '${').replace(/%%\{/g, () => '%{');
}

export function specHash(specTrigger: string): string {
  return createHash('sha256').update(specTrigger).digest('hex').slice(0, 16);
}

/** A reference to another construct's id, as the spec carries it. */
const REF = /^\$\{(null_resource\.[A-Za-z0-9_-]+)\.id\}$/;

export function refString(address: string): string {
  return '${' + address + '.id}';
}

/** The address (`null_resource.x`) a string refers to, or null for a literal. */
export function refAddress(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return REF.exec(value)?.[1] ?? null;
}

/** Every address the spec refers to, in first-seen order. */
export function refsIn(value: unknown, out: string[] = []): string[] {
  const a = refAddress(value);
  if (a) {
    if (!out.includes(a)) out.push(a);
  } else if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => refsIn(v, out));
  return out;
}

/** Replaces each reference with what `resolve` returns for its address. */
export function mapRefs(value: unknown, resolve: (address: string) => unknown): unknown {
  const a = refAddress(value);
  if (a) return resolve(a);
  if (Array.isArray(value)) return value.map((v) => mapRefs(v, resolve));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapRefs(v, resolve)]));
  return value;
}
