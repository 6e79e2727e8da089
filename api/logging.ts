// No log line holds an API key. Keys reach the server in the Authorization header and, on /graphql,
// in `?api_key=` (spec 5.3): pino's redact censors the header wherever a logged object carries it,
// and the request serializer censors `api_key` in the logged URL, on every route (a key sent where it
// is not accepted is still a key).
import type { FastifyRequest } from 'fastify';
import type { Logger, LoggerOptions } from 'pino';

const CENSOR = '[Redacted]';

/** Paths pino censors in every log line, at the root and one object down (`{ req: { headers } }`). */
export const LOG_REDACT: NonNullable<LoggerOptions['redact']> = {
  paths: [
    'headers.authorization',
    'headers.cookie',
    '*.headers.authorization',
    '*.headers.cookie',
    'authorization',
    '*.authorization',
    'api_key',
    '*.api_key',
    '*.query.api_key',
  ],
  censor: CENSOR,
};

/** `url` with the value of every `api_key` (and media `signature`, exec `ticket`, port link `gpufleet_link`) query parameter censored (names compared decoded, any case). */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  let changed = false;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq < 0 ? part : part.slice(0, eq);
      // the name as the query parser reads it (percent-decoded, `+` a space)
      const name = new URLSearchParams(`${rawName}=`).keys().next().value ?? rawName;
      if (!isKeyName(name) && !isKeyName(rawName)) return part;
      changed = true;
      return `${rawName}=${CENSOR}`;
    });
  return changed ? `${url.slice(0, q)}?${parts.join('&')}` : url;
}

// `signature`: a media URL's signature is its credential (docs/media.md); `ticket`: an exec
// WebSocket's single-use credential (docs/pods.md), spent on use but still a secret until then;
// `gpufleet_link`: a pod port's signed link (docs/connect.md), good for 60 s
const isKeyName = (name: string): boolean => {
  const n = name.trim().toLowerCase();
  return n.includes('api_key') || n === 'signature' || n === 'ticket' || n === 'gpufleet_link';
};

/** Fastify's request serializer, with the URL censored; anything else logged as `req` passes (redact still applies). */
export function serializeRequest(req: unknown): unknown {
  if (!isRequest(req)) return req;
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

const isRequest = (v: unknown): v is FastifyRequest =>
  typeof v === 'object' && v !== null && typeof (v as { url?: unknown }).url === 'string' && typeof (v as { method?: unknown }).method === 'string';

/** The logger the HTTP server writes to: `base`, with the redaction and the request serializer. */
export function serverLogger(base: Logger): Logger {
  return base.child({}, { redact: LOG_REDACT, serializers: { req: serializeRequest } });
}
