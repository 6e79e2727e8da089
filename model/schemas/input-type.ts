// Request types come from the request schemas, so a field is declared once (the schema) and its
// type follows. Defaulted properties stay optional: Ajv runs with useDefaults off, so a field the
// client left out is absent after validation, whatever `default` the schema documents.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

export type InputOf<S extends JSONSchema> = FromSchema<S, { keepDefaultedPropertiesOptional: true }>;
