// The console's session (docs/console.md, "Sessions and security"): the API key is posted once to
// POST /console/session, which answers who signed in and sets a host-only HttpOnly cookie; every later
// request carries that cookie (same origin) and the CSRF token header. The key is never kept: not in
// storage, not in the DOM (the sign-in field is emptied), not in any other request.
import { ApiClient, ApiError, responseError } from '../../client/index.ts';

export type Scope = 'read' | 'read_write' | 'admin';

export interface Session {
  accountId: string;
  scope: Scope;
  operator: boolean;
  /** the key's prefix, shown in the account menu and named by the audit trail */
  keyPrefix: string;
  /** header name → value sent on every request (the CSRF token) */
  headers: Record<string, string>;
}

/** GET /console/session */
interface SessionAnswer {
  accountId?: string;
  scope?: Scope;
  operator?: boolean;
  keyPrefix?: string;
  csrfToken?: string;
}

const CSRF_HEADER = 'x-csrf-token';

function sessionOf(a: SessionAnswer): Session {
  return {
    accountId: a.accountId ?? '',
    scope: a.scope ?? 'read',
    operator: a.operator === true,
    keyPrefix: a.keyPrefix ?? '',
    headers: a.csrfToken ? { [CSRF_HEADER]: a.csrfToken } : {},
  };
}

/** exchanges the key for a session cookie (204), then reads who it is; a wrong key rejects with the server's ApiError (401) */
export async function signIn(key: string): Promise<Session> {
  const res = await fetch('/console/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiKey: key }),
  });
  if (!res.ok) throw await responseError(res);
  const s = await currentSession();
  if (!s) throw new ApiError(401, 'UNAUTHENTICATED', 'The session was not kept: this browser may refuse the cookie.');
  return s;
}

/** the session this browser already has (a reload), or null */
export async function currentSession(): Promise<Session | null> {
  const res = await fetch('/console/session', { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (res.status === 401) return null;
  if (!res.ok) throw await responseError(res);
  return sessionOf((await res.json()) as SessionAnswer);
}

/** ends the session on the server (the cookie is cleared by its answer) */
export async function signOut(session: Session): Promise<void> {
  await fetch('/console/session', { method: 'DELETE', credentials: 'same-origin', headers: session.headers });
}

/**
 * the public-API client of a session: the origin in the address bar, the cookie, the CSRF header. Its
 * WebSockets are the browser's own (the client's default here); the exec terminal's goes by a
 * single-use ticket asked with the session (client/pod-exec-socket.ts)
 */
export function clientOf(session: Session): ApiClient {
  return new ApiClient({ url: location.origin, session: { headers: session.headers } });
}

export const canWrite = (s: Session): boolean => s.scope !== 'read';
export const isAdmin = (s: Session): boolean => s.scope === 'admin';
