// PostgreSQL's jsonb cannot hold two things a JavaScript string can: the NUL character (\u0000) and a
// lone UTF-16 surrogate (half of a pair, e.g. "\ud800"). The embedded store keeps them; here a record
// holding one is refused as a validation failure (422, naming where it is) rather than failing in the
// database as a 500. Sealed fields are ciphertext by then, so env values may hold anything.
import { GpufleetError } from '../../model/index.ts';

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** a string jsonb cannot hold (so no stored record has it) */
export const unstorable = (s: string): boolean => UNSTORABLE.test(s);

const pathOf = (base: string, key: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`);

function find(v: unknown, at: string, out: string[]): void {
  if (out.length >= 10) return;
  if (typeof v === 'string') {
    if (UNSTORABLE.test(v)) out.push(`${at}: holds a NUL character or an unpaired UTF-16 surrogate, which cannot be stored`);
  } else if (Array.isArray(v)) v.forEach((x, i) => find(x, `${at}[${i}]`, out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      if (UNSTORABLE.test(k)) out.push(`${pathOf(at, k)}: the name holds a NUL character or an unpaired UTF-16 surrogate, which cannot be stored`);
      find(x, pathOf(at, k), out);
    }
}

/** Throws VALIDATION_FAILED when a value of the record (its disk form) cannot be stored in jsonb. */
export function assertStorable(collection: string, stored: Record<string, unknown>): void {
  const errors: string[] = [];
  find(stored, '$', errors);
  if (errors.length > 0)
    throw new GpufleetError('VALIDATION_FAILED', `The ${collection} record holds text the database cannot store.`, { errors, fields: { collection } });
}
