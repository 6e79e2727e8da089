// Building blocks shared by the resource schemas. Limits here are the ones docs/validation.md lists.
// Patterns run with Ajv's `u` flag, so a class of surrogates matches only a lone (unpaired) one.
export const PORT_PATTERN = '^[0-9]{1,5}/(tcp|udp|http)$';

/** Control characters (Unicode Cc: C0, DEL, C1) except tab, and lone surrogates (no UTF-8 form). */
const CONTROLS = '\\u0000-\\u0008\\u000A-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF';
/** Text that reaches a host (names, args): no control character but tab. */
export const TEXT_PATTERN = `^[^${CONTROLS}]*$`;
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
/** A registry username: no control character at all (tab included), no lone surrogate. */
export const REGISTRY_USERNAME_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$';
/** A registry password: no control character but tab and line breaks (a JSON key file's), no lone surrogate. */
export const REGISTRY_PASSWORD_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$';
/** Env values reach the container byte for byte, so only what no environment can hold is refused. */
export const ENV_VALUE_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';
/** An absolute container path; `:` would end the path in docker's `--volume=src:dst[:mode]`. */
export const CONTAINER_PATH_PATTERN = `^/[^\\s:${CONTROLS}]*$`;

// The registry reference grammar (github.com/distribution/reference, regexp.go), written for an
// ECMAScript engine: [domain[:port]/]path-component[/path-component...][:tag][@digest]. A first
// component is a domain only when docker would read it as one (has a dot or a port, or is
// localhost); otherwise it is a path component and must be lower case. Never starts with '-'.
const ALNUM = '[a-z0-9]+';
const PATH_COMPONENT = `${ALNUM}(?:(?:[._]|__|-+)${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:(?:localhost|${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})+|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?|${DOMAIN_COMPONENT}:[0-9]+)`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
export const IMAGE_REFERENCE_PATTERN = `^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::${TAG})?(?:@${DIGEST})?$`;

/** A public model's slug: a path segment of `/v2/{slug}/run` (docs/public-endpoints.md). */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$';

/** What a failed pattern means, for `errors` lines (Ajv would print the regular expression). */
export const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  [TEXT_PATTERN]: 'must not contain control characters (tab aside)',
  [ENV_VALUE_PATTERN]: 'must not contain a NUL character or an unpaired surrogate',
  [CONTAINER_PATH_PATTERN]: 'must be an absolute path without whitespace, control characters or ":"',
  [REGISTRY_USERNAME_PATTERN]: 'must not contain control characters or an unpaired surrogate',
  [REGISTRY_PASSWORD_PATTERN]: 'must not contain control characters (tab and line breaks aside) or an unpaired surrogate',
  [SLUG_PATTERN]: 'must be lowercase letters, digits and hyphens, starting and ending with a letter or digit',
  [IMAGE_REFERENCE_PATTERN]: 'must be an image reference: [registry[:port]/]name[:tag][@algorithm:hex], name in lower case',
};

export const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: TEXT_PATTERN } as const;
export const imageSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  pattern: IMAGE_REFERENCE_PATTERN,
  description: 'image reference: [registry[:port]/]name[:tag][@digest]',
} as const;
export const argsSchema = { type: 'string', maxLength: 4096, pattern: TEXT_PATTERN } as const;
export const diskSchema = { type: 'integer', minimum: 1, maximum: 10000, description: 'container disk in GB' } as const;
export const portsSchema = {
  type: 'array',
  maxItems: 64,
  items: { type: 'string', pattern: PORT_PATTERN, description: '<port>/<protocol>, protocol tcp, udp or http' },
} as const;
export const envSchema = {
  type: 'object',
  maxProperties: 256,
  propertyNames: { pattern: ENV_NAME_PATTERN, maxLength: 256 },
  additionalProperties: { type: 'string', maxLength: 32768, pattern: ENV_VALUE_PATTERN },
} as const;
export const nullableIdSchema = { type: ['string', 'null'], maxLength: 64 } as const;
export const cloudSchema = { type: 'string', enum: ['SECURE', 'COMMUNITY'] } as const;
export const cudaVersionsSchema = {
  type: 'array',
  maxItems: 32,
  items: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$' },
} as const;
export const tagsSchema = {
  type: 'object',
  maxProperties: 32,
  additionalProperties: { type: 'string', maxLength: 512 },
} as const;
export const containerPathSchema = { type: 'string', minLength: 2, maxLength: 1024, pattern: CONTAINER_PATH_PATTERN } as const;

/** Port numbers beyond the pattern: 1..65535. Returns `<json_path>: <message>` lines. */
export function checkPortRanges(ports: readonly string[] | undefined, path = '$.ports'): string[] {
  const errors: string[] = [];
  ports?.forEach((p, i) => {
    const n = Number.parseInt(p, 10);
    if (!(n >= 1 && n <= 65535)) errors.push(`${path}[${i}]: port must be between 1 and 65535`);
  });
  const seen = new Set<number>();
  ports?.forEach((p, i) => {
    const n = Number.parseInt(p, 10);
    if (seen.has(n)) errors.push(`${path}[${i}]: port ${n} is listed twice`);
    seen.add(n);
  });
  return errors;
}
