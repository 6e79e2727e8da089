// The one place an error becomes an HTTP reply: application/problem+json (RFC 9457) with `title`
// (the status's reason phrase), `status`, `detail` and, for validation failures, `errors`.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';

export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: string[];
  [extension: string]: unknown;
}

export function toProblem(e: GpufleetError): Problem {
  const p: Problem = { ...e.extensions, title: e.title, status: e.status, detail: e.message, code: e.code };
  if (e.errors?.length) p.errors = e.errors;
  return p;
}

/** Fastify's own errors (bad JSON, wrong content type, body too large) mapped into the registry. */
export function fromFastifyError(err: FastifyError, request?: FastifyRequest): GpufleetError {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GpufleetError('INVALID_JSON', `The request body is not valid JSON: ${err.message}`, { cause: err });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GpufleetError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.', { cause: err });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GpufleetError('PAYLOAD_TOO_LARGE', `The request body is larger than the ${sizeText(request?.routeOptions.bodyLimit ?? 1 << 20)} limit of this route.`, { cause: err });
    default:
      if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)
        return new GpufleetError('BAD_REQUEST', err.message, { cause: err });
      return new GpufleetError('INTERNAL', 'An internal error occurred; it has been logged.', { cause: err });
  }
}

const sizeText = (bytes: number): string => (bytes % (1 << 20) === 0 ? `${bytes >> 20} MiB` : `${bytes} byte`);

export function sendProblem(reply: FastifyReply, e: GpufleetError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return reply.code(e.status).type('application/problem+json').send(toProblem(e));
}

export function registerProblemHandlers(app: FastifyInstance, allowedMethods: (url: string) => string[]): void {
  app.setErrorHandler((err: FastifyError | GpufleetError, request: FastifyRequest, reply: FastifyReply) => {
    const e = isGpufleetError(err) ? err : fromFastifyError(err as FastifyError, request);
    if (e.status >= 500) request.log.error({ err, code: e.code }, 'request failed');
    return sendProblem(reply, e);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const methods = allowedMethods(path);
    if (methods.length > 0)
      return sendProblem(
        reply,
        new GpufleetError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; use ${methods.join(', ')}.`, {
          headers: { allow: methods.join(', ') },
        }),
      );
    // the URL as sent (a mount may have rewritten it before routing, api/origin-mount.ts)
    return sendProblem(reply, new GpufleetError('ROUTE_NOT_FOUND', `No route ${request.method} ${request.originalUrl.split('?')[0] ?? path}.`));
  });
}
