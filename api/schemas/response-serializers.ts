// The route schemas' serializers (Fastify's serializer compiler): fast-json-stringify from each
// route's response schema. It writes only the properties a schema names, so a response schema names
// every field of its view (test/api/serializers-on-off.test.ts compares every route's answers with
// serializers on and off, and fails on a field a schema lacks). What the schema says for validation
// only is left out of the serializer's copy, so an answer is what JSON.stringify would write:
// `required` (a missing field is omitted, not a 500), `default` (nothing is filled in), `integer`
// (written as a number, never truncated), and oneOf/anyOf/allOf/not branches that name no properties
// (podViewSchema's "exactly one of gpu and cpu" would run Ajv on every pod otherwise).
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

/** `enabled: false`: every answer through JSON.stringify (the comparison test's other side). */
export function serializerCompiler(enabled: boolean): FastifySerializerCompiler<unknown> {
  if (!enabled) return () => (data) => JSON.stringify(data);
  return ({ schema }) => fastJson(serializationSchema(schema) as Parameters<typeof fastJson>[0]);
}
