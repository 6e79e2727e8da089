// The route schemas' serializers (Fastify's serializer compiler): fast-json-stringify from each
// route's response schema. It writes only the properties a schema names, so a response schema names
// every field of its view (test/api/schemas/serializers-on-off.test.ts compares every route's answers with
// serializers on and off, and fails on a field a schema lacks). What the schema says for validation
// only is left out of the serializer's copy, so an answer is what JSON.stringify would write:
// `required` (a missing field is omitted, not a 500), `default` (nothing is filled in), `integer`
// (written as a number, never truncated), and oneOf/anyOf/allOf/not branches that name no properties
// (podViewSchema's "exactly one of gpu and cpu" would run Ajv on every pod otherwise).
import { isDeepStrictEqual } from 'node:util';
import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';

type Json = unknown;

const VALIDATION_ONLY = new Set(['required', 'default', 'examples', 'example', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'enum', 'const', 'uniqueItems', 'multipleOf', 'propertyNames', 'if', 'then', 'else', 'not']);
const COMBINERS = ['oneOf', 'anyOf', 'allOf'] as const;

/** does this schema say anything about the shape written (properties, items, a type)? */
function shapes(s: Json): boolean {
  if (typeof s !== 'object' || s === null) return false;
  const o = s as Record<string, Json>;
  return 'properties' in o || 'items' in o || 'type' in o || 'additionalProperties' in o || '$ref' in o || COMBINERS.some((c) => Array.isArray(o[c]) && (o[c] as Json[]).some(shapes));
}

/** The schema fast-json-stringify compiles: the response schema less what only validation reads. */
export function serializationSchema(s: Json): Json {
  if (Array.isArray(s)) return s.map(serializationSchema);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(s as Record<string, Json>)) {
    if (VALIDATION_ONLY.has(k)) continue;
    if ((COMBINERS as readonly string[]).includes(k)) {
      if (Array.isArray(v) && v.some(shapes)) out[k] = v.map(serializationSchema);
      continue;
    }
    if (k === 'type') out[k] = v === 'integer' ? 'number' : Array.isArray(v) ? [...new Set(v.map((t) => (t === 'integer' ? 'number' : t)))] : v;
    else if (k === 'properties' || k === 'patternProperties' || k === 'definitions' || k === '$defs')
      out[k] = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([p, ps]) => [p, serializationSchema(ps)]));
    else if (k === 'items' || k === 'additionalProperties') out[k] = serializationSchema(v);
    else out[k] = v;
  }
  return out;
}

/** One answer whose serialized form differs from JSON.stringify's (a field its schema lacks, …). */
export interface SerializerMismatch {
  route: string;
  status: string;
  fast: unknown;
  plain: unknown;
}

/**
 * The comparison mode: each answer written both ways and compared as JSON values (the serializer's
 * answer is sent). `answered` hears every route and status answered, `declared` every one that has
 * a response schema, so a test can tell which it has not driven.
 */
export interface SerializerComparison {
  mismatch(m: SerializerMismatch): void;
  declared?(route: string, status: string): void;
  answered?(route: string, status: string): void;
}

/**
 * `true`: fast-json-stringify from the response schemas; `false`: JSON.stringify; a comparison:
 * both, every answer compared (test/api/schemas/serializers-on-off.test.ts).
 */
export function serializerCompiler(mode: boolean | SerializerComparison): FastifySerializerCompiler<unknown> {
  if (mode === false) return () => (data) => JSON.stringify(data);
  if (mode === true) return ({ schema }) => fastJson(serializationSchema(schema) as Parameters<typeof fastJson>[0]);
  return ({ schema, method, url, httpStatus }) => {
    const fast = fastJson(serializationSchema(schema) as Parameters<typeof fastJson>[0]);
    const route = `${method} ${url}`;
    const status = String(httpStatus);
    mode.declared?.(route, status);
    return (data) => {
      const out = fast(data);
      const plain = JSON.stringify(data);
      mode.answered?.(route, status);
      const a: unknown = JSON.parse(out);
      const b: unknown = plain === undefined ? undefined : JSON.parse(plain);
      if (!isDeepStrictEqual(a, b)) mode.mismatch({ route, status, fast: a, plain: b });
      return out;
    };
  };
}
