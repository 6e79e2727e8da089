// The one error registry. Every failure that can reach a user has a stable code here, with the HTTP
// status it maps to. REST turns these into problem+json in one place (api/errors/problem.ts); GraphQL
// puts the code in extensions.code. Nothing parses a message string.
import { STATUS_CODES } from 'node:http';

export const ERROR_CODES = {
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  MOUNT_RULE: 400,
  PLACEMENT_IMPOSSIBLE: 400,
  CAPACITY_UNAVAILABLE: 400,
  VOLUME_SHRINK: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  /**
   * a state-changing request authenticated by a console session cookie came without the session's
   * X-CSRF-Token and without the console's own Origin, or with another Origin (docs/console.md)
   */
  CSRF_REFUSED: 403,
  /** a console sign-in over plain HTTP to a name other than loopback (docs/console.md, "Sessions and security") */
  CONSOLE_NEEDS_HTTPS: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_TRANSITION: 409,
  IN_USE: 409,
  CONFLICT: 409,
  LOCKED: 409,
  /** a worker reported on a job it does not hold (lease lost: requeued, or taken by another worker) */
  JOB_LEASE_LOST: 409,
  /** a worker reported on a job that is already final (a late or duplicate job-done) */
  JOB_ALREADY_FINAL: 409,
  /** the account's credits are used up (balance − usage ≤ 0): job submission is refused (spec 5.6) */
  CREDITS_EXHAUSTED: 402,
  /** the account's monthly budget (USD per calendar month, UTC) is used up: new work is refused (docs/teams.md) */
  BUDGET_EXHAUSTED: 402,
  /** a create, start, resize or scale-up would take the account past one of its limits (docs/teams.md) */
  QUOTA_EXCEEDED: 403,
  /** a signed media URL past its expiry (docs/media.md): the bytes are gone or about to be */
  MEDIA_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  /** a media request's Range lies outside the object (Content-Range names its size) */
  RANGE_NOT_SATISFIABLE: 416,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  IDEMPOTENCY_MISMATCH: 422,
  RATE_LIMITED: 429,
  /** the account holds its share of a host's streams (logs, exec) already (docs/security.md, "Stream shares") */
  HOST_STREAM_SHARE: 429,
  /** the account holds the most long-held requests of one kind at once (event streams, job waits, logs, exec) */
  HELD_REQUESTS: 429,
  INTERNAL: 500,
  /** the job queue's log has a damaged record that is not a torn last write; it is not opened */
  JOB_LOG_CORRUPT: 500,
  HOST_UNREACHABLE: 502,
  /** a load-balancing worker could not be reached, or broke off its answer (docs/gateway.md) */
  BAD_GATEWAY: 502,
  /** a load-balancing worker did not answer within the gateway's time per request */
  GATEWAY_TIMEOUT: 504,
  /** the store could not make a write durable (disk full, I/O error): nothing of it was applied; retry */
  STORE_UNAVAILABLE: 503,
  /** the job queue could not make a change durable (disk full, I/O error): it was not made; retry */
  JOB_QUEUE_UNAVAILABLE: 503,
  /** the control plane cannot serve this now: not ready (/readyz), a pod's host unreachable for its logs */
  UNAVAILABLE: 503,
  HOST_KEY_MISMATCH: 502,
  HOST_REQUIREMENT: 422,
  SSH_COMMAND_FAILED: 502,
  /** this replica no longer holds the host's reconcile lease (another took it over): its pass stops (docs/replicas.md) */
  HOST_LEASE_LOST: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface GpufleetErrorOptions {
  /** validation failures, each `<json_path>: <message>` */
  errors?: string[];
  cause?: unknown;
  /** structured fields for callers (never parsed from the message) */
  fields?: Record<string, unknown>;
  /** extra response headers (Retry-After, Allow) */
  headers?: Record<string, string>;
  /** members added to the problem+json body and to GraphQL's `extensions` (RFC 9457 extension members), e.g. the limit a refusal names */
  extensions?: Record<string, unknown>;
}

export class GpufleetError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: string[] | undefined;
  readonly fields: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(code: ErrorCode, detail: string, options: GpufleetErrorOptions = {}) {
    // A refusal (4xx) is an answer to the caller, not a fault: nothing reads its stack, and capturing
    // one was measurable on every refused request (a body validation 422, a flood of 401s or 429s).
    // Faults (5xx) keep theirs for the log.
    const frames = Error.stackTraceLimit;
    if (ERROR_CODES[code] < 500) Error.stackTraceLimit = 0;
    try {
      super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = frames;
    }
    this.name = 'GpufleetError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.errors = options.errors;
    this.fields = options.fields ?? {};
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }

  /** the standard reason phrase of the status, used as problem+json `title` */
  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }
}

export function isGpufleetError(e: unknown): e is GpufleetError {
  return e instanceof GpufleetError;
}
