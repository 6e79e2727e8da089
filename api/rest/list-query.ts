// Query-string parsing for list routes beside pods: each parameter once, booleans spelled true/false,
// `tag=key=value` repeatable, and unknown parameters a 422 (a typo must not silently widen a list).
// Names are compared as own names only (a Set, never `in`), so `constructor` is unknown too.
import { GpufleetError } from '../../model/index.ts';
import { queryByHand } from '../schemas/request-validators.ts';

export interface ListQuerySpec<S extends string, B extends string> {
  strings?: readonly S[];
  booleans?: readonly B[];
  tag?: boolean;
}

export type ListQuery<S extends string, B extends string> = { [K in S]?: string } & { [K in B]?: boolean } & {
  tag?: Record<string, string>;
};

export function parseListQuery<S extends string = never, B extends string = never>(
  raw: unknown,
  spec: ListQuerySpec<S, B>,
): ListQuery<S, B> {
  const q = (raw ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const errors: string[] = [];
  const one = (k: string): string | undefined => {
    const v = q[k];
    if (v === undefined || typeof v === 'string') return v;
    errors.push(`$.${k}: must be given once`);
    return undefined;
  };
  for (const k of spec.strings ?? []) {
    const v = one(k);
    if (v !== undefined) out[k] = v;
  }
  for (const k of spec.booleans ?? []) {
    const v = one(k);
    if (v === 'true' || v === 'false') out[k] = v === 'true';
    else if (v !== undefined) errors.push(`$.${k}: must be true or false`);
  }
  if (spec.tag && q.tag !== undefined) {
    const tags: Record<string, string> = {};
    for (const t of Array.isArray(q.tag) ? q.tag : [q.tag]) {
      const m = typeof t === 'string' ? /^([^=]+)=(.*)$/.exec(t) : null;
      if (!m) errors.push('$.tag: must be key=value');
      else tags[m[1]!] = m[2]!;
    }
    out.tag = tags;
  }
  // `api_key` is no exception: a key is accepted in the query on /graphql only (docs/auth.md)
  const known = new Set<string>([...(spec.strings ?? []), ...(spec.booleans ?? []), ...(spec.tag ? ['tag'] : [])]);
  for (const k of Object.keys(q)) if (!known.has(k)) errors.push(`$.${k}: unknown query parameter`);
  if (errors.length) throw new GpufleetError('VALIDATION_FAILED', `Invalid query: ${errors.join('; ')}`, { errors });
  return out as ListQuery<S, B>;
}

/** OpenAPI description of the same parameters (parseListQuery above is the check: queryByHand). */
export function listQuerySchema(spec: ListQuerySpec<string, string>) {
  const properties: Record<string, object> = {};
  for (const k of spec.strings ?? []) properties[k] = { type: 'string' };
  for (const k of spec.booleans ?? []) properties[k] = { type: 'boolean' };
  if (spec.tag) properties.tag = { type: 'string', description: 'key=value; repeat to require several' };
  return queryByHand({ type: 'object', properties });
}
