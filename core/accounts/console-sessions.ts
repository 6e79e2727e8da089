// Web console sessions (docs/console.md, "Sessions and security"): an API key is exchanged once for a
// random session secret that the browser keeps as an HttpOnly cookie. Sessions live in the store, so
// every replica honours them, keyed by the secret's sha256 (a copy of the store opens no session).
// A session acts as its key does now: the key's scope and account are read on every request, and a
// revoked or expired key ends its sessions (ApiKeys.revoke deletes them; a request finds the key gone).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { GpufleetError, type ConsoleSessionRecord, type Principal } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { hashKey, type ApiKeys } from './api-keys.ts';

/** a session is good this long after sign-in unless GPUFLEET_CONSOLE_SESSION_TTL says otherwise */
export const CONSOLE_SESSION_TTL_MS = 12 * 3600_000;

/** the shape of a session secret: 32 random bytes, base64url (43 characters) */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface ConsoleSession {
  principal: Principal;
  record: ConsoleSessionRecord;
}

export class ConsoleSessions {
  constructor(
    private readonly store: Store,
    private readonly keys: ApiKeys,
    readonly ttlMs: number = CONSOLE_SESSION_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Signs in with an API key: its principal (401 for a key that is unknown, revoked or expired) and
   * a new session's secret, the only time it exists outside the caller. The account's expired
   * sessions are swept in the same transaction.
   */
  async signIn(apiKey: unknown): Promise<{ secret: string; session: ConsoleSession }> {
    if (typeof apiKey !== 'string' || apiKey.trim() === '')
      throw new GpufleetError('VALIDATION_FAILED', 'Send the API key to sign in with as {"apiKey": "<key>"}.', { errors: ['$.apiKey: required, a string'] });
    let principal: Principal;
    try {
      principal = await this.keys.authenticate(undefined, apiKey.trim());
    } catch (e) {
      if (e instanceof GpufleetError && e.code === 'UNAUTHENTICATED')
        throw new GpufleetError('UNAUTHENTICATED', `Sign-in refused: ${e.message} Check the key (gpufleet keys list shows each key's prefix) and try again.`);
      throw e;
    }
    const key = await this.store.get('apiKeys', principal.keyId);
    const now = this.clock();
    const secret = randomBytes(32).toString('base64url');
    const record: ConsoleSessionRecord = {
      id: hashKey(secret),
      accountId: principal.accountId,
      keyId: principal.keyId,
      keyPrefix: key?.prefix ?? '',
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.ttlMs).toISOString(),
    };
    await this.store.transact(async (tx) => {
      for (const old of await tx.list('consoleSessions', { accountId: principal.accountId }))
        if (Date.parse(old.expiresAt) <= now) tx.delete('consoleSessions', old.id);
      tx.put('consoleSessions', record);
    });
    return { secret, session: { principal, record } };
  }

  /**
   * The session a cookie's secret opens, with its key's principal as it is now; null when the secret
   * names no session, the session expired, or its key no longer authenticates (revoked, expired, its
   * account gone): such a session is deleted.
   */
  async open(secret: string): Promise<ConsoleSession | null> {
    if (!SECRET_SHAPE.test(secret)) return null;
    const record = await this.store.get('consoleSessions', hashKey(secret));
    if (!record) return null;
    const principal = Date.parse(record.expiresAt) > this.clock() ? await this.keys.principalOfKey(record.keyId) : null;
    if (!principal || principal.accountId !== record.accountId) {
      await this.end(record.id).catch(() => undefined); // bookkeeping: the request is refused either way
      return null;
    }
    return { principal, record };
  }

  /** Ends the session a cookie's secret names, if any (a new sign-in replaces the browser's old one). */
  async endBySecret(secret: string): Promise<void> {
    if (SECRET_SHAPE.test(secret)) await this.end(hashKey(secret));
  }

  /** Ends a session (sign-out); ending one that is gone is not an error. */
  async end(sessionId: string): Promise<void> {
    await this.store.transact(async (tx) => {
      if (await tx.get('consoleSessions', sessionId)) tx.delete('consoleSessions', sessionId);
    });
  }
}

/** Whether `sent` is the session's CSRF token (compared in constant time). */
export function csrfTokenMatches(session: ConsoleSessionRecord, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
