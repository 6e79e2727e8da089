// The route schemas' validators (Fastify's validator compiler). A body is checked by the service's
// own check, so a refusal is the service's answer word for word (the spec's 400/422, the registry's
// code, `errors` as `$.path: message`): a body copied from a model schema (docSchema) runs the
// model's compiled validator under the name the service gives it (BODY_NAMES), with the 400 rules
// the service runs before its schema; a body with a check of its own (bodyCheck) runs that. Bodies
// are never coerced, never stripped of unknown properties, never given defaults (the model's Ajv).
// Query strings and path parameters are text on the wire: their Ajv coerces to the declared types
// ("true" → true, "5" → 5, one value → [value] where an array is declared) and nothing else.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRouteSchemaDef, FastifyValidationResult } from 'fastify/types/schema.js';
import { check, checkCreateMountRules, compile, formatErrors, GpufleetError, isGpufleetError } from '../../model/index.ts';
import { modelSchemaOf } from './model-schemas.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** query strings, path parameters, headers: text coerced to the declared types, nothing removed or filled in */
const textAjv = new Ajv({ allErrors: true, strict: false, useDefaults: false, coerceTypes: 'array', removeAdditional: false });
addFormats(textAjv);

/**
 * Each model body schema and the name its service's check gives it ("The <name> failed validation:
 * …"), with what the service checks before the schema (spec 2.2's mount conflicts answer 400 first).
 * A new body schema goes here with the name its service passes to check().
 */
const BODY_NAMES: Record<string, { name: string; before?: (body: unknown) => void; emptyIsObject?: true; serviceFirst?: (body: unknown) => boolean }> = {
  PodCreate: { name: 'pod', before: checkCreateMountRules },
  // a PATCH with mounts meets rules that need the stored pod (a kind not present at creation, an
  // immutable volumeId: 400) before the schema: the service checks such a body, in that order
  PodUpdate: { name: 'pod update', serviceFirst: (body) => typeof body === 'object' && body !== null && 'mounts' in body },
  PodAction: { name: 'pod action' },
  PodExec: { name: 'exec' },
  TemplateCreate: { name: 'template' },
  TemplateUpdate: { name: 'template update' },
  NetworkVolumeCreate: { name: 'network volume' },
  NetworkVolumeUpdate: { name: 'network volume update' },
  RegistryCreate: { name: 'registry credential' },
  RegistryUpdate: { name: 'registry credential update' },
  EndpointCreate: { name: 'endpoint' },
  EndpointUpdate: { name: 'endpoint update' },
  EndpointV2Create: { name: 'endpoint' },
  EndpointV2Update: { name: 'endpoint update' },
  PublicEndpointCreate: { name: 'public endpoint' },
  JobRun: { name: 'job request' },
  KeyCreate: { name: 'API key' },
  AccountCreate: { name: 'account' },
  AccountCredit: { name: 'credit' },
  AccountLimitsPatch: { name: 'limits' },
  HostEnroll: { name: 'host enrollment' },
  // these services take no body as {} (the schema then names a missing field)
  HostDrain: { name: 'drain request', emptyIsObject: true },
  HostUpdate: { name: 'host update', emptyIsObject: true },
  HostDiagnose: { name: 'diagnose request', emptyIsObject: true },
  HostGpuClear: { name: 'clear request', emptyIsObject: true },
  StackLockAcquire: { name: 'stack lock', emptyIsObject: true },
};

const ownChecks = new WeakMap<object, (body: unknown) => unknown>();

/** A route body whose service checks it by hand (its own messages): that check is the route's validator. */
export function bodyCheck<T extends object>(schema: T, checkBody: (body: unknown) => unknown): T {
  ownChecks.set(schema, checkBody);
  return schema;
}

type Outcome = true | { error: Error };

/**
 * A body the handler checks itself, after checks that must answer first (the console's sign-in:
 * its transport and Origin before anything about the body): the schema documents it.
 */
export function bodyByHand<T extends object>(schema: T): T {
  return bodyCheck(schema, () => undefined);
}

/** a thrown registry error is the refusal; anything else is a bug and propagates */
function refusalOf(run: () => unknown): Outcome {
  try {
    run();
    return true;
  } catch (e) {
    if (isGpufleetError(e)) return { error: e };
    throw e;
  }
}

function bodyValidator(schema: object, route: string): FastifyValidationResult {
  const own = ownChecks.get(schema);
  if (own) return (body: unknown) => refusalOf(() => own(body));
  const model = modelSchemaOf(schema);
  const known = model?.$id !== undefined ? BODY_NAMES[model.$id] : undefined;
  if (model && !known) throw new Error(`${route}: body schema ${model.$id ?? '(no $id)'} has no entry in BODY_NAMES (api/schemas/request-validators.ts)`);
  const validate = compile<unknown>(model ?? schema);
  const name = known?.name ?? 'request body';
  return (body: unknown) =>
    refusalOf(() => {
      if (known?.serviceFirst?.(body)) return;
      known?.before?.(body);
      // these services check `body ?? {}`
      check(validate, known?.emptyIsObject ? (body ?? {}) : body, name);
    });
}

const byHand = new WeakSet<object>();

/**
 * A query string a route's own parser checks (parseListQuery, parsePodListQuery, …): its messages
 * ("must be given once", "must be true or false", "unknown query parameter", all errors at once)
 * are the answers clients see, so the schema documents it and the parser refuses. Typed as the
 * text it is: each value a string, or an array when repeated.
 */
export function queryByHand(schema: object): { type: 'object'; additionalProperties: { type: ['string', 'array'] } } {
  byHand.add(schema);
  return schema as { type: 'object'; additionalProperties: { type: ['string', 'array'] } };
}

const PART_NAMES: Record<string, string> = { querystring: 'query', params: 'path', headers: 'headers' };

function textValidator(schema: object, part: string): FastifyValidationResult {
  if (byHand.has(schema)) return () => true;
  const validate: ValidateFunction = textAjv.compile(modelSchemaOf(schema) ?? schema);
  return (value: unknown): Outcome => {
    if (validate(value)) return true;
    const errors = formatErrors(validate.errors);
    return { error: new GpufleetError('VALIDATION_FAILED', `Invalid ${PART_NAMES[part] ?? part}: ${errors.join('; ')}`, { errors }) };
  };
}

export function validatorCompiler({ schema, httpPart, method, url }: FastifyRouteSchemaDef<object>): FastifyValidationResult {
  return httpPart === 'body' ? bodyValidator(schema, `${method} ${url}`) : textValidator(schema, httpPart ?? 'request');
}
