// The one place a GraphQL error gets its shape: `message` is the GpufleetError detail,
// `extensions.code` its registry code, `extensions.errors` its `<json_path>: <message>` list.
// Errors in the document (syntax, validation, limits, variable values) are BAD_REQUEST; anything a
// resolver throws that is not a GpufleetError is a fault of ours: INTERNAL, logged, details withheld.
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { FastifyBaseLogger } from 'fastify';
import { isGpufleetError, type ErrorCode, type GpufleetError } from '../../model/index.ts';

type Where = Pick<GraphQLFormattedError, 'locations' | 'path'>;

function where(err: GraphQLError): Where {
  const w: { locations?: GraphQLFormattedError['locations']; path?: GraphQLFormattedError['path'] } = {};
  if (err.locations?.length) w.locations = err.locations;
  if (err.path) w.path = err.path;
  return w;
}

export function fromGpufleetError(e: GpufleetError, at: Where = {}): GraphQLFormattedError {
  const extensions: Record<string, unknown> = { ...e.extensions, code: e.code };
  if (e.errors?.length) extensions.errors = e.errors;
  return { message: e.message, ...at, extensions };
}

const internal = (at: Where): GraphQLFormattedError => ({
  message: 'An internal error occurred; it has been logged.',
  ...at,
  extensions: { code: 'INTERNAL' satisfies ErrorCode },
});

/** An error in an execution result: a resolver threw, or graphql-js reported a request-level problem. */
export function formatExecutionError(err: GraphQLError, log: FastifyBaseLogger): GraphQLFormattedError {
  const orig = err.originalError;
  if (isGpufleetError(orig)) {
    if (orig.status >= 500) log.error({ err: orig }, 'graphql resolver failed');
    return fromGpufleetError(orig, where(err));
  }
  // no original error and no path: a request error such as a missing operationName
  if (!orig && !err.path) return documentError(err);
  log.error({ err: orig ?? err }, 'graphql resolver failed');
  return internal(where(err));
}

/** An error in the request document, found before anything ran. */
export function documentError(err: Error): GraphQLFormattedError {
  if (!(err instanceof GraphQLError)) return { message: err.message, extensions: { code: 'BAD_REQUEST' satisfies ErrorCode } };
  const orig = err.originalError;
  const code = isGpufleetError(orig) ? orig.code : typeof err.extensions.code === 'string' ? err.extensions.code : 'BAD_REQUEST';
  return { message: err.message, ...where(err), extensions: { code } };
}

/** Mercurius throws parse, validation and variable errors as one error carrying them in `errors`. */
export function documentErrors(e: unknown): GraphQLFormattedError[] | null {
  const list = (e as { errors?: unknown } | null)?.errors;
  if (isGpufleetError(e) || !Array.isArray(list) || list.length === 0) return null;
  return list.map((x) => documentError(x instanceof Error ? x : new Error(String(x))));
}
