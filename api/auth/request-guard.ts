// Every request passes here first. What it needs is decided from the route that matched
// (request.routeOptions), never from the URL string, whose spellings (absolute-form, percent-encoded,
// trailing slash) the router folds together. Deny by default: a route is public only when its config
// says `public: true`; every other route needs a key, and a route that names no scope needs an
// operator's admin key. Every request, matched or not, is first counted against the caller's
// rate-limit windows (the headers go on successes and errors alike). Worker protocol routes
// (`worker: true`) take a worker's own token instead of an API key, valid only for the worker and
// endpoint the route names, and are not counted against the account's windows. Where no key came, the
// web console's session cookie stands for the key it was made from (console-cookie.ts: CSRF token or
// own Origin on state-changing requests), except on routes marked `consoleSession: false`.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { ApiKeyScope } from '../../model/index.ts';
import { GpufleetError } from '../../model/index.ts';
import { isMetricsToken } from './metrics-token.ts';
import { relayedWorkerProven, relayHostOf } from './relayed-requests.ts';
import type { RequestLimiter } from '../rate-limit/limiter.ts';
import { chargeArrival } from '../rate-limit/request-charge.ts';
import { hasScope, type ApiKeys, type WorkerIdentity } from '../../core/index.ts';
import type { ConsoleSessionRecord, Principal } from '../../model/index.ts';
import type { ConsoleSessions } from '../../core/index.ts';
import { assertSessionRequest, sessionSecret, type ConsoleCookieSettings } from './console-cookie.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** served without a key (health, docs); nothing else is */
    public?: boolean;
    /** scope the route needs; a protected route without one needs an operator's admin key */
    scope?: ApiKeyScope;
    /** the route is served to operator accounts only (fleet, accounts) */
    operator?: boolean;
    /** the key may also come as `?api_key=` (GraphQL clients, spec 5.3); nowhere else */
    apiKeyInQuery?: boolean;
    /** the key may also be sent bare, `Authorization: <key>` (the job interface, as the public docs' curl) */
    rawKey?: boolean;
    /**
     * a worker protocol route (job-take, job-done, ping, …): `Authorization: <worker token>`, which
     * must belong to the route's `:workerId` and `:endpointId`; an API key is not accepted
     */
    worker?: boolean;
    /**
     * `Authorization: Bearer $GPUFLEET_METRICS_TOKEN` is accepted here besides a key (GET /metrics
     * only): a scraper's token that opens no other route and names no account
     */
    metricsToken?: boolean;
    /**
     * the route also takes `?ticket=<single-use ticket>` instead of a key, redeemed by this function
     * into the principal of the key that asked for it (interactive exec: browsers cannot set headers
     * on a WebSocket, docs/pods.md); the scope check below still applies
     */
    redeemTicket?: (ticket: string, request: FastifyRequest) => Promise<Principal | null>;
    /**
     * the route also takes a credential of its own when no Authorization header came (a pod port's
     * signed link or its cookie, gateway/pod-ports.ts): undefined when the request carries none,
     * else the principal it stands for, or null (refused: 401); the scope check below still applies
     */
    credential?: (request: FastifyRequest) => Promise<Principal | null> | undefined;
    /**
     * a GET that changes state (a job status with `?ttl`, a job stream that consumes its chunks):
     * with the console session it needs the CSRF token or the console's own Origin like a POST
     */
    changesState?: boolean | ((request: FastifyRequest) => boolean);
    /**
     * an authenticated caller's requests here are not counted against the account's rate limits (a
     * pod's own web traffic through its port, gateway/pod-ports.ts: a notebook loads hundreds of
     * assets); refused callers are still counted per address
     */
    unmetered?: boolean;
    /**
     * false: the console's session cookie is not read here (worker and pod content: every route a
     * mount registers, api/server.ts); such routes take a key only. Default: read when no key came.
     */
    consoleSession?: boolean;
  }
}

/** Who a worker token belongs to (the WorkerDirectory port, core/workers/worker-directory.ts). */
export interface WorkerAuthenticator {
  authenticate(token: string): Promise<WorkerIdentity | null>;
}

/** The callers of authenticated requests; only `principalOf` reads it. */
const principals = new WeakMap<FastifyRequest, Principal>();
/** The console sessions of requests the session cookie authenticated; only `consoleSessionOf` reads it. */
const sessions = new WeakMap<FastifyRequest, { record: ConsoleSessionRecord; principal: Principal }>();
/** The workers of authenticated worker protocol requests; only `workerOf` reads it. */
const workers = new WeakMap<FastifyRequest, WorkerIdentity>();

/** Every route registered on an app, as the router holds it (HEAD twins of GET routes included). */
const routeLists = new WeakMap<FastifyInstance, RouteOptions[]>();

export interface RegisteredRoute {
  method: string;
  url: string;
  public: boolean;
  scope: ApiKeyScope | undefined;
  operator: boolean;
  worker: boolean;
}

const NO_WORKERS: WorkerAuthenticator = { authenticate: async () => null };

/** the console's sessions and cookie settings (docs/console.md, "Sessions and security") */
export interface ConsoleAuth {
  sessions: ConsoleSessions;
  settings: ConsoleCookieSettings;
}

export function registerRequestGuard(
  app: FastifyInstance,
  keys: ApiKeys,
  limiter: RequestLimiter,
  workerTokens: WorkerAuthenticator = NO_WORKERS,
  metricsToken: string | undefined = undefined,
  consoleAuth: ConsoleAuth | undefined = undefined,
): void {
  const routes: RouteOptions[] = [];
  routeLists.set(app, routes);
  // the options object itself: hooks of plugins (the docs) may still set its config after this one
  app.addHook('onRoute', (route) => void routes.push(route));

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    const matched = !request.is404;
    const isPublic = matched && config.public === true;
    if (matched && config.worker === true) return guardWorker(request, reply, limiter, workerTokens);
    // the scrape token: on the routes that take it, and only as the whole Bearer credential
    if (matched && config.metricsToken === true && metricsToken !== undefined && isMetricsToken(request.headers.authorization, metricsToken))
      return chargeArrival(request, reply, limiter, 'metrics-token');
    let principal: Principal | null = null;
    // built only when thrown: an error's stack capture is measurable on every authenticated request
    let authError: unknown = null;
    const queryKey = matched && config.apiKeyInQuery === true ? apiKeyFromQuery(request) : undefined;
    const ticket = matched && config.redeemTicket && request.headers.authorization === undefined ? queryString(request, 'ticket') : undefined;
    const own = matched && config.credential && request.headers.authorization === undefined ? config.credential(request) : undefined;
    // the console's cookie: only where no key, ticket or credential of the route's own came
    let cookie: string | undefined;
    if (consoleAuth && matched && !isPublic && config.consoleSession !== false && request.headers.authorization === undefined && queryKey === undefined && ticket === undefined && own === undefined) {
      // a refused cookie (two of the session's name over plain HTTP) is thrown below, after the request is counted
      try {
        cookie = sessionSecret(request, consoleAuth.settings);
      } catch (e) {
        authError = e;
      }
    }
    let session: ConsoleSessionRecord | undefined;
    if (own !== undefined) {
      principal = await own;
      if (!principal) authError = new GpufleetError('UNAUTHENTICATED', 'This link or its cookie is not good (forged, expired, for another port, or its key was revoked): ask for a new link.');
    } else if (ticket !== undefined) {
      principal = await config.redeemTicket!(ticket, request);
      if (!principal) authError = new GpufleetError('UNAUTHENTICATED', 'This ticket is not good: tickets are good once, for their pod, for 30 s.');
    } else if (request.headers.authorization !== undefined || queryKey !== undefined) {
      const opts = { rawKey: matched && config.rawKey === true };
      // a key authenticated a moment ago answers without a promise (core/accounts/recent-keys.ts)
      principal = keys.recentPrincipal(request.headers.authorization, queryKey, opts) ?? null;
      if (!principal)
        try {
          principal = await keys.authenticate(request.headers.authorization, queryKey, opts);
        } catch (e) {
          authError = e;
        }
    } else if (cookie !== undefined) {
      const opened = await consoleAuth!.sessions.open(cookie);
      if (!opened) authError = new GpufleetError('UNAUTHENTICATED', 'The console session has ended (signed out, expired, or its API key was revoked or expired): sign in again.');
      else {
        // the key as it is now, marked as coming through the console: the events of its changes say so
        principal = { ...opened.principal, via: 'console', keyPrefix: opened.record.keyPrefix };
        session = opened.record;
      }
    }
    // limit per account; a caller without a valid key is limited per address
    if (!(principal && matched && config.unmetered === true)) {
      const charging = chargeArrival(request, reply, limiter, principal ? `acct:${principal.accountId}` : `anon:${anonSubject(request)}`);
      if (charging) await charging;
    }
    // no route: the not-found handler answers 404/405 and nothing runs
    if (!matched || isPublic) return;
    if (!principal) throw authError ?? new GpufleetError('UNAUTHENTICATED', 'An API key is required: send Authorization: Bearer <key>.');
    if (session) {
      assertSessionRequest(request, consoleAuth!.settings, session);
      // from here on the request is the session's: its audit event names it, refused for scope or not
      sessions.set(request, { record: session, principal });
    }
    const needed = config.scope ?? 'admin';
    if (!hasScope(principal, needed))
      throw new GpufleetError('FORBIDDEN', `This API key has the ${principal.scope} scope; ${request.method} ${request.routeOptions.url} needs ${needed}.`);
    if ((config.operator === true || config.scope === undefined) && !principal.operator)
      throw new GpufleetError('FORBIDDEN', 'Only operator accounts may manage the fleet and other accounts.');
    principals.set(request, principal);
  });
}

/**
 * A worker protocol request: the raw token (runpod-python sends `Authorization: <RUNPOD_AI_API_KEY>`;
 * `Bearer <token>` is taken too) must be a live worker's, and that worker must be the one the route
 * names, on the endpoint it names. Authenticated workers are not rate limited (their long polls and
 * pings are the protocol itself); failures are counted per address like any anonymous caller.
 */
async function guardWorker(request: FastifyRequest, reply: FastifyReply, limiter: RequestLimiter, tokens: WorkerAuthenticator): Promise<void> {
  const header = request.headers.authorization?.trim();
  const token = header ? (/^Bearer +(\S+)$/i.exec(header)?.[1] ?? header) : undefined;
  const id = token && /^[\x21-\x7e]{8,512}$/.test(token) ? await tokens.authenticate(token) : null;
  if (!id) {
    await chargeArrival(request, reply, limiter, `anon:${anonSubject(request)}`);
    throw new GpufleetError('UNAUTHENTICATED', "Worker protocol calls take the worker's own token: Authorization: <RUNPOD_AI_API_KEY>.");
  }
  const params = request.params as { workerId?: unknown; endpointId?: unknown };
  if (params.workerId !== id.workerId || params.endpointId !== id.endpointId)
    throw new GpufleetError('FORBIDDEN', `This worker token belongs to worker ${id.workerId} of endpoint ${id.endpointId}; it can make that worker's calls only.`);
  // through a host's relay, only that host's workers (docs/serverless.md, "Reaching the control plane")
  const via = relayHostOf(request.raw);
  if (via !== undefined && id.hostId !== via)
    throw new GpufleetError('FORBIDDEN', `Worker ${id.workerId} does not run on the host whose relay carried this call; a worker calls through its own host's relay.`);
  if (via !== undefined) relayedWorkerProven(request.raw);
  workers.set(request, id);
}

function apiKeyFromQuery(request: FastifyRequest): string | undefined {
  return queryString(request, 'api_key');
}

function queryString(request: FastifyRequest, name: string): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  const v = q !== undefined && Object.hasOwn(q, name) ? q[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** per address: keying on the presented (invalid) key would let a caller rotate garbage keys */
function anonSubject(request: FastifyRequest): string {
  return request.ip;
}

/** The caller of a request the guard authenticated; throws 401 where there is none. */
export function principalOf(request: FastifyRequest): Principal {
  const p = principals.get(request);
  if (!p) throw new GpufleetError('UNAUTHENTICATED', 'An API key is required.');
  return p;
}

/**
 * The console session a request came with and passed the CSRF and Origin checks with, and its
 * principal (whether or not the route's scope then allowed it); undefined for a key, a ticket, ….
 */
export function consoleSessionOf(request: FastifyRequest): { record: ConsoleSessionRecord; principal: Principal } | undefined {
  return sessions.get(request);
}

/** The worker of a worker protocol request the guard authenticated; throws 401 where there is none. */
export function workerOf(request: FastifyRequest): WorkerIdentity {
  const w = workers.get(request);
  if (!w) throw new GpufleetError('UNAUTHENTICATED', 'A worker token is required.');
  return w;
}

/** The routes of an app built with the guard, with what each needs (for tests and docs). */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return (routeLists.get(app) ?? []).flatMap((r) =>
    (Array.isArray(r.method) ? r.method : [r.method]).map((method) => ({
      method: String(method),
      url: r.url,
      public: r.config?.public === true,
      scope: r.config?.scope,
      operator: r.config?.operator === true,
      worker: r.config?.worker === true,
    })),
  );
}
