// The console's only private routes (docs/console.md, "Sessions and security"): an API key exchanged
// for a session cookie, who the session is (with its CSRF token), and sign-out. Everything else the
// console does goes through the public API, which takes the cookie in place of a Bearer key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleSessions, EventService } from '../../core/index.ts';
import { GpufleetError, userActor, type ConsoleSessionRecord, type Principal } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import { consoleSessionOf, principalOf } from '../auth/request-guard.ts';
import { assertOrigin, assertSignInTransport, sessionClearCookie, sessionSecret, sessionSetCookie, type ConsoleCookieSettings } from '../auth/console-cookie.ts';
import { auditConsoleAction } from './audit.ts';
import { bodyByHand } from '../schemas/request-validators.ts';
import { errorResponses } from '../rest/route-schema.ts';

export const CONSOLE_SESSION_PATH = '/console/session';

export interface ConsoleSessionDeps {
  sessions: ConsoleSessions;
  settings: ConsoleCookieSettings;
  store: StoreReader;
  events: EventService;
}

const signInBody = {
  type: 'object',
  required: ['apiKey'],
  additionalProperties: false,
  properties: { apiKey: { type: 'string', minLength: 1, maxLength: 512 } },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
/** sessionView below: who the session is, with its CSRF token */
const sessionViewSchema = {
  type: 'object',
  properties: {
    accountId: { type: 'string' },
    accountName: nullableString,
    email: nullableString,
    keyId: { type: 'string' },
    keyPrefix: { type: 'string' },
    scope: { type: 'string' },
    operator: { type: 'boolean' },
    csrfToken: { type: 'string' },
    createdAt: { type: 'string' },
    expiresAt: { type: 'string' },
    actor: { type: 'string' },
  },
} as const;
const noBody = { type: 'null' } as const;

function sessionOrRefuse(request: FastifyRequest): ConsoleSessionRecord {
  const s = consoleSessionOf(request)?.record;
  if (!s) throw new GpufleetError('UNAUTHENTICATED', 'No console session came with this request: sign in with POST /console/session (a Bearer key has no session).');
  return s;
}

export function consoleSessionRoutes(app: FastifyInstance, d: ConsoleSessionDeps): void {
  // public: the key comes in the body; the guard counts every try against the caller's address
  app.post(CONSOLE_SESSION_PATH, { config: { public: true }, schema: { hide: true, body: bodyByHand(signInBody), response: { 204: noBody, ...errorResponses(400, 401, 403, 415, 422, 429) } } }, async (request, reply) => {
    assertSignInTransport(request, d.settings);
    // no sign-in from another site's page (login CSRF): a browser names the page's origin
    assertOrigin(request, d.settings, false);
    const body = request.body as { apiKey?: unknown } | undefined;
    const { secret, session } = await d.sessions.signIn(body?.apiKey);
    // the session this browser had until now ends: its cookie is replaced below, and none lingers
    const previous = sessionSecret(request, d.settings, 'none');
    if (previous !== undefined) await d.sessions.endBySecret(previous);
    auditConsoleAction(d.events, session.principal, session.record, 'console.sign_in', `${request.method} ${CONSOLE_SESSION_PATH}`, 204);
    return reply
      .code(204)
      .header('cache-control', 'no-store')
      .header('set-cookie', sessionSetCookie(request, d.settings, secret, d.sessions.ttlMs))
      .send();
  });

  app.get(CONSOLE_SESSION_PATH, { config: { scope: 'read' }, schema: { hide: true, response: { 200: sessionViewSchema, ...errorResponses(401, 429) } } }, async (request, reply) => {
    const s = sessionOrRefuse(request);
    const p = principalOf(request);
    reply.header('cache-control', 'no-store');
    return sessionView(p, s, await d.store.get('accounts', p.accountId));
  });

  app.delete(CONSOLE_SESSION_PATH, { config: { scope: 'read' }, schema: { hide: true, response: { 204: noBody, ...errorResponses(401, 403, 429) } } }, async (request, reply) => {
    const s = sessionOrRefuse(request);
    await d.sessions.end(s.id);
    return reply.code(204).header('cache-control', 'no-store').header('set-cookie', sessionClearCookie(request, d.settings)).send();
  });
}

function sessionView(p: Principal, s: ConsoleSessionRecord, account: { name: string; email: string } | undefined) {
  return {
    accountId: p.accountId,
    accountName: account?.name ?? null,
    email: account?.email ?? null,
    keyId: p.keyId,
    keyPrefix: s.keyPrefix,
    scope: p.scope,
    operator: p.operator,
    csrfToken: s.csrfToken,
    createdAt: s.createdAt,
    expiresAt: s.expiresAt,
    actor: userActor(p.keyId),
  };
}
