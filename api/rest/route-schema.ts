// Route schemas feed the OpenAPI document; request validation itself runs in the services with the
// same model schemas (so GraphQL and the constructs get identical answers). See server.ts.
export function docSchema<T extends { $id?: string }>(schema: T): Omit<T, '$id'> {
  const { $id: _id, ...rest } = schema;
  return rest;
}

export const problemSchema = {
  type: 'object',
  description: 'application/problem+json',
  required: ['title', 'status', 'detail'],
  properties: {
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'array', items: { type: 'string' } },
  },
} as const;

export function errorResponses(...codes: number[]): Record<number, typeof problemSchema> {
  return Object.fromEntries(codes.map((c) => [c, problemSchema]));
}

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;
