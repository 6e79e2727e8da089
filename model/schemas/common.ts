// Building blocks shared by the resource schemas. Limits here are the ones docs/validation.md lists.
export const PORT_PATTERN = '^[0-9]{1,5}/(tcp|udp|http)$';

export const nameSchema = { type: 'string', minLength: 1, maxLength: 191 } as const;
export const imageSchema = { type: 'string', minLength: 1, maxLength: 512, pattern: '^[^\\s]+$' } as const;
export const argsSchema = { type: 'string', maxLength: 4096 } as const;
export const diskSchema = { type: 'integer', minimum: 1, maximum: 10000, description: 'container disk in GB' } as const;
export const portsSchema = {
  type: 'array',
  maxItems: 64,
  items: { type: 'string', pattern: PORT_PATTERN, description: '<port>/<protocol>, protocol tcp, udp or http' },
} as const;
export const envSchema = {
  type: 'object',
  maxProperties: 256,
  propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 256 },
  additionalProperties: { type: 'string', maxLength: 32768 },
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
export const containerPathSchema = { type: 'string', minLength: 2, maxLength: 1024, pattern: '^/[^\\s]*$' } as const;

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
