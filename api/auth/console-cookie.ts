// The web console's session cookie and the checks a cookie-borne request passes (docs/console.md,
// "Sessions and security"). The request guard (request-guard.ts) reads the cookie only on routes that
// take it (not on worker or pod content: a mount's routes, `consoleSession: false`), and only when no
// Authorization header came: a Bearer key always wins.
//
// - Name: `__Host-gpufleet-session` over HTTPS (host-only, Path=/, Secure: a sibling host can neither
//   set nor shadow it); over plain HTTP browsers refuse `__Host-` and `Secure` cookies, so there the
//   name is `gpufleet-session`, and plain HTTP signs in only on loopback names unless
//   GPUFLEET_CONSOLE_ALLOW_HTTP=true. Both names start with `gpufleet`, so the proxies strip them
//   before anything reaches a worker or a pod (isGpufleetCookie).
// - HttpOnly (no script reads it), SameSite=Strict (never sent on a request another site starts;
//   the console's HTML is public, so a link from elsewhere still opens it and its own requests carry
//   the cookie), Max-Age the session's lifetime.
// - HTTPS is known from the socket (TLS), or from GPUFLEET_PUBLIC_URL when it is https and the request
//   names its host (a TLS front before the control plane). X-Forwarded-Proto is not trusted.
import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import { cookieValue, csrfTokenMatches } from '../../core/index.ts';
import { GpufleetError, type ConsoleSessionRecord } from '../../model/index.ts';

export const SESSION_COOKIE_HTTPS = '__Host-gpufleet-session';
export const SESSION_COOKIE_HTTP = 'gpufleet-session';
/** the header a state-changing cookie-borne request carries the session's CSRF token in */
export const CSRF_HEADER = 'x-csrf-token';

export interface ConsoleCookieSettings {
  /** GPUFLEET_PUBLIC_URL */
  publicUrl?: string | undefined;
  /** GPUFLEET_CONSOLE_ALLOW_HTTP */
  allowHttp: boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** GPUFLEET_PUBLIC_URL parsed once per settings object (it is read on every cookie-borne request) */
const parsed = new WeakMap<ConsoleCookieSettings, URL | null>();

function publicOrigin(s: ConsoleCookieSettings): URL | null {
  let u = parsed.get(s);
  if (u === undefined) {
    try {
      u = s.publicUrl ? new URL(s.publicUrl) : null;
    } catch {
      u = null;
    }
    parsed.set(s, u);
  }
  return u;
}

const hostOf = (request: FastifyRequest): string => (request.headers.host ?? '').toLowerCase();

/** https when the connection is TLS, or when it names GPUFLEET_PUBLIC_URL's host and that URL is https */
export function requestScheme(request: FastifyRequest, s: ConsoleCookieSettings): 'https' | 'http' {
  if (request.protocol === 'https') return 'https';
  const pub = publicOrigin(s);
  return pub?.protocol === 'https:' && pub.host.toLowerCase() === hostOf(request) ? 'https' : 'http';
}

/** the console's own origin for this request: the scheme it came by and the host it named */
export function ownOrigin(request: FastifyRequest, s: ConsoleCookieSettings): string {
  return `${requestScheme(request, s)}://${hostOf(request)}`;
}

export const sessionCookieName = (scheme: 'https' | 'http'): string => (scheme === 'https' ? SESSION_COOKIE_HTTPS : SESSION_COOKIE_HTTP);

/**
 * the session secret this request's cookie carries (the name its scheme uses), if any. Over plain
 * HTTP a cookie is no proof of who set it (another port of the same name, or with
 * GPUFLEET_CONSOLE_ALLOW_HTTP a sibling host's `Domain` cookie): two of the session's name are
 * ambiguous, and refused (401) rather than one picked; `ambiguous: 'none'` answers undefined instead
 * (sign-in, which replaces the cookie anyway).
 */
export function sessionSecret(request: FastifyRequest, s: ConsoleCookieSettings, ambiguous: 'refuse' | 'none' = 'refuse'): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || !header.includes('gpufleet-session')) return undefined;
  const scheme = requestScheme(request, s);
  const name = sessionCookieName(scheme);
  if (scheme === 'http' && header.split(';').filter((part) => part.slice(0, part.indexOf('=')).trim() === name).length > 1) {
    if (ambiguous === 'none') return undefined;
    throw new GpufleetError(
      'UNAUTHENTICATED',
      `More than one ${name} cookie came: over plain HTTP another site on this host name may have set one, so neither is used. Clear this site's cookies and sign in again (or serve the console over HTTPS).`,
    );
  }
  return cookieValue(header, name);
}

/** `Set-Cookie` for a new session */
export function sessionSetCookie(request: FastifyRequest, s: ConsoleCookieSettings, secret: string, ttlMs: number): string {
  const scheme = requestScheme(request, s);
  const secure = scheme === 'https' ? '; Secure' : '';
  return `${sessionCookieName(scheme)}=${secret}; Path=/; Max-Age=${Math.floor(ttlMs / 1000)}; HttpOnly${secure}; SameSite=Strict`;
}

/** `Set-Cookie` that removes the session's cookie (sign-out) */
export function sessionClearCookie(request: FastifyRequest, s: ConsoleCookieSettings): string {
  const scheme = requestScheme(request, s);
  return `${sessionCookieName(scheme)}=; Path=/; Max-Age=0; HttpOnly${scheme === 'https' ? '; Secure' : ''}; SameSite=Strict`;
}

/** localhost, *.localhost, 127.0.0.0/8, ::1 (the Host header's name, without its port) */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1';
}

/** Sign-in is refused over plain HTTP to a name that is not loopback, unless the operator allowed it. */
export function assertSignInTransport(request: FastifyRequest, s: ConsoleCookieSettings): void {
  if (s.allowHttp || requestScheme(request, s) === 'https' || isLoopbackHost(hostOf(request))) return;
  throw new GpufleetError(
    'CONSOLE_NEEDS_HTTPS',
    `The console signs in over HTTPS only (this request came over plain HTTP to ${hostOf(request) || 'no host'}): serve it behind TLS and set GPUFLEET_PUBLIC_URL=https://…, or set GPUFLEET_CONSOLE_ALLOW_HTTP=true on a private test fleet.`,
  );
}

/**
 * An `Origin` other than the console's own (or GPUFLEET_PUBLIC_URL's) is refused on any request
 * that uses the session; a missing one is accepted except on WebSocket upgrades.
 */
export function assertOrigin(request: FastifyRequest, s: ConsoleCookieSettings, upgrade: boolean): 'same' | 'absent' {
  const origin = request.headers.origin;
  if (origin === undefined) {
    if (upgrade) throw new GpufleetError('CSRF_REFUSED', 'A WebSocket opened with the console session must come from the console (no Origin was sent).');
    return 'absent';
  }
  const pub = publicOrigin(s);
  if (origin === ownOrigin(request, s) || (pub !== null && origin === pub.origin)) return 'same';
  throw new GpufleetError('CSRF_REFUSED', `Origin ${origin} may not use the console session: only the console's own pages (${ownOrigin(request, s)}) may.`);
}

/** whether the request changes state: any method but GET, HEAD and OPTIONS (a GraphQL POST included) */
export const isStateChanging = (request: FastifyRequest): boolean => !SAFE_METHODS.has(request.method);

/** a state-changing method, or a GET its route says changes state (`config.changesState`) */
function needsCsrf(request: FastifyRequest): boolean {
  if (isStateChanging(request)) return true;
  const says = request.routeOptions.config.changesState;
  return typeof says === 'function' ? says(request) : says === true;
}

/**
 * What a request authenticated by the session cookie must also show: no foreign `Origin` (and, on a
 * WebSocket upgrade, the console's own); when it changes state, the session's X-CSRF-Token or the
 * console's own `Origin` (a GET that changes state too: a job status with `?ttl`, a job stream).
 * Throws CSRF_REFUSED.
 */
export function assertSessionRequest(request: FastifyRequest, s: ConsoleCookieSettings, session: ConsoleSessionRecord): void {
  const origin = assertOrigin(request, s, request.headers.upgrade !== undefined);
  if (!needsCsrf(request) || origin === 'same') return;
  const sent = request.headers[CSRF_HEADER];
  if (!csrfTokenMatches(session, typeof sent === 'string' ? sent : undefined))
    throw new GpufleetError(
      'CSRF_REFUSED',
      `${request.method} with the console session needs the session's X-CSRF-Token header (GET /console/session answers it) or the console's own Origin.`,
    );
}
