// The one canonical JSON: what JSON.stringify writes for the value with every object's keys sorted
// (arrays keep their order: it is meaningful, as in ports or gpuTypeIds). So `undefined` (and
// anything else JSON cannot hold) is left out as an object property and written null as an array
// item, exactly as JSON.stringify does. The request-body hash of an idempotent create and the spec a
// construct synthesizes therefore agree on what "the same JSON" is.

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

// strings built directly, not a sorted copy: a copy would turn a `__proto__` key into a prototype
function write(v: unknown): string | undefined {
  if (Array.isArray(v)) return `[${v.map((x) => write(x) ?? 'null').join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v).sort(byKey)) {
      const s = write(x);
      if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
    }
    return `{${parts.join(',')}}`;
  }
  // TypeScript's lib says string; JSON.stringify(undefined) is undefined
  const scalar: string | undefined = JSON.stringify(v);
  return scalar;
}

/** JSON with object keys sorted; a top-level value JSON cannot hold (undefined) is written null. */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}
