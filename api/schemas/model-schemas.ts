// Route schemas that are a model schema (a request body, the billing query): the route gets a copy
// without `$id` (so the OpenAPI document inlines it), and this table leads back from the copy to the
// model's own object, so the route's validator is the very function the service compiled (Ajv caches
// a compiled schema by its object) and refuses with the service's words (request-validators.ts).
const modelOf = new WeakMap<object, { $id?: string }>();

/** The route's copy of a model schema: the same schema without `$id`, remembered as that model's. */
export function docSchema<T extends { $id?: string }>(schema: T): Omit<T, '$id'> {
  const { $id: _id, ...rest } = schema;
  modelOf.set(rest, schema);
  return rest;
}

/** The model schema a route schema was copied from, if any. */
export function modelSchemaOf(routeSchema: unknown): { $id?: string } | undefined {
  return typeof routeSchema === 'object' && routeSchema !== null ? modelOf.get(routeSchema) : undefined;
}
