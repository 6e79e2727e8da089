// One Ajv instance for every resource schema, and the translation of its errors into the
// `<json_path>: <message>` lines of problem+json `errors` (JSONPath-style paths: `$.gpu.count`).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { GpufleetError } from '../base/errors.ts';
import { PATTERN_MESSAGES } from '../schemas/common.ts';

// ajv-formats ships CommonJS with a default export object
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false });
addFormats(ajv);

export function jsonPath(pointer: string): string {
  if (pointer === '') return '$';
  return (
    '$' +
    pointer
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`))
      .join('')
  );
}

function describe(e: ErrorObject): string {
  const at = jsonPath(e.instancePath);
  switch (e.keyword) {
    case 'additionalProperties': {
      const prop = (e.params as { additionalProperty: string }).additionalProperty;
      return `${jsonPath(`${e.instancePath}/${prop}`)}: unknown property`;
    }
    case 'required': {
      const prop = (e.params as { missingProperty: string }).missingProperty;
      return `${jsonPath(`${e.instancePath}/${prop}`)}: is required`;
    }
    case 'enum':
      return `${at}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern': {
      const pattern = (e.params as { pattern: string }).pattern;
      return `${at}: ${PATTERN_MESSAGES[pattern] ?? e.message ?? 'is invalid'}`;
    }
    case 'propertyNames':
      return `${at}: has an invalid property name ${JSON.stringify((e.params as { propertyName: string }).propertyName)}`;
    default:
      return `${at}: ${e.message ?? 'is invalid'}`;
  }
}

export function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  const out = new Set<string>();
  for (const e of errors ?? []) if (e.keyword !== "if") out.add(describe(e));
  return [...out].filter((line) => !line.includes(': must match "then" schema'));
}

export function compile<T>(schema: object): ValidateFunction<T> {
  return ajv.compile<T>(schema);
}

/** Validates `value` and returns it typed, or throws VALIDATION_FAILED (422) listing every failure. */
export function check<T>(validate: ValidateFunction<T>, value: unknown, what: string): T {
  if (validate(value)) return value;
  const errors = formatErrors(validate.errors);
  throw new GpufleetError('VALIDATION_FAILED', `The ${what} failed validation: ${errors.join('; ')}`, { errors });
}

export function fail422(what: string, errors: string[]): never {
  throw new GpufleetError('VALIDATION_FAILED', `The ${what} failed validation: ${errors.join('; ')}`, { errors });
}

export function fail400(detail: string, errors?: string[]): never {
  throw new GpufleetError('BAD_REQUEST', detail, errors ? { errors } : {});
}
