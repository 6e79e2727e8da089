// Accounts and API keys. A key is shown once; only its sha256 and a short non-secret prefix are
// stored. Keys are 256-bit random strings, so a fast hash is enough (no password stretching needed).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SCOPE_RANK, type AccountRecord, type ApiKeyRecord, type ApiKeyScope, type Principal } from '../../model/index.ts';
import { GpufleetError } from '../../model/index.ts';
import type { Store, StoreTx } from '../../store/index.ts';
import { RecentKeys } from './recent-keys.ts';

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function newId(prefix: string): string {
  return `${prefix}${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}

export function generateKey(): string {
  return `gf_${randomBytes(32).toString('base64url')}`;
}

/** a key is one token of printable ASCII without spaces (RFC 6750 b64token plus what people paste) */
const KEY_SHAPE = /^[\x21-\x7e]{8,512}$/;

/** keys remembered by `ApiKeys.authenticate`; the map is emptied when it reaches this size */
const SEEN_KEYS_MAX = 10_000;

/** `lastUsedAt` is written at most this often per key: a busy key costs one store write a minute */
export const LAST_USED_EVERY_MS = 60_000;

export class ApiKeys {
  /**
   * Key → key record id for keys seen recently, so a request skips the hash and the index lookup.
   * Only the id is remembered: the record is read from the store on every request, so a revocation
   * or an expiry applies from the next request on.
   */
  private readonly seen = new Map<string, string>();
  /** key record id → the `lastUsedAt` write under way, so concurrent requests queue one write */
  private readonly touching = new Map<string, Promise<void>>();
  private readonly recent: RecentKeys;

  constructor(private readonly store: Store) {
    this.recent = new RecentKeys(store);
  }

  /**
   * `rawKey`: the header may also be the bare key (`Authorization: <key>`), as the public docs' curl
   * examples send it to the job interface; routes allow it with `config: { rawKey: true }`.
   */
  async authenticate(header: string | undefined, queryKey?: string, opts: { rawKey?: boolean } = {}): Promise<Principal> {
    const key = keyOf(header, queryKey, opts.rawKey === true);
    if (typeof key !== 'string') throw new GpufleetError('UNAUTHENTICATED', key.refused);
    const recent = this.recent.get(key, Date.now());
    if (recent) return recent;
    const mark = this.recent.mark();
    const seenId = this.seen.get(key);
    let rec = seenId === undefined ? undefined : await this.store.get('apiKeys', seenId);
    if (!rec) {
      [rec] = await this.store.list('apiKeys', { hash: hashKey(key) });
      if (!rec) throw new GpufleetError('UNAUTHENTICATED', 'The API key is not valid.');
      if (this.seen.size >= SEEN_KEYS_MAX) this.seen.clear();
      this.seen.set(key, rec.id);
    }
    const refused = keyRefusal(rec, Date.now());
    if (refused) throw new GpufleetError('UNAUTHENTICATED', refused);
    const account = await this.store.get('accounts', rec.accountId);
    if (!account) throw new GpufleetError('UNAUTHENTICATED', 'The API key belongs to no account.');
    // bookkeeping, not the request: when the store cannot write (a full disk) a read still goes
    // through; the store has logged that failure itself
    const now = Date.now();
    const principal: Principal = { accountId: account.id, keyId: rec.id, scope: rec.scope, operator: account.operator };
    if (stale(rec.lastUsedAt, now)) await this.touch(rec.id).catch(() => undefined);
    // taken on trust for a moment (core/accounts/recent-keys.ts): until it expires or its use is due to be written
    else this.recent.set(key, principal, mark, now, Math.min(rec.expiresAt ? Date.parse(rec.expiresAt) : Infinity, Date.parse(rec.lastUsedAt!) + LAST_USED_EVERY_MS));
    return principal;
  }

  /**
   * The principal of a key this replica authenticated a moment ago (RecentKeys), without a promise;
   * undefined where `authenticate` must answer (not seen lately, malformed, refused).
   */
  recentPrincipal(header: string | undefined, queryKey?: string, opts: { rawKey?: boolean } = {}): Principal | undefined {
    const key = keyOf(header, queryKey, opts.rawKey === true);
    return typeof key === 'string' ? this.recent.get(key, Date.now()) : undefined;
  }

  /**
   * The principal of a key by its id, as long as the key is still good (not revoked, not expired)
   * and its account exists; null otherwise. For credentials a key issued (signed port links and
   * their cookies, core/connect), so revoking the key ends them too.
   */
  async principalOfKey(keyId: string): Promise<Principal | null> {
    const rec = await this.store.get('apiKeys', keyId);
    if (!rec || keyRefusal(rec, Date.now())) return null;
    const account = await this.store.get('accounts', rec.accountId);
    return account ? { accountId: account.id, keyId: rec.id, scope: rec.scope, operator: account.operator } : null;
  }

  /** Records that a key was used, through the store (throttled: see LAST_USED_EVERY_MS). */
  private touch(keyId: string): Promise<void> {
    let p = this.touching.get(keyId);
    if (!p) {
      p = this.store
        .transact(async (tx) => {
          const cur = await tx.get('apiKeys', keyId);
          const now = Date.now();
          // checked again inside the transaction: another request may have written it meanwhile
          if (cur && stale(cur.lastUsedAt, now)) tx.put('apiKeys', { ...cur, lastUsedAt: new Date(now).toISOString() });
        })
        .finally(() => this.touching.delete(keyId));
      this.touching.set(keyId, p);
    }
    return p;
  }

  async createAccount(input: { email: string; name?: string; operator?: boolean; balance?: number }): Promise<AccountRecord> {
    return this.store.transact((tx) => this.createAccountIn(tx, input));
  }

  private async createAccountIn(tx: StoreTx, input: { email: string; name?: string; operator?: boolean; balance?: number }): Promise<AccountRecord> {
    if ((await tx.list('accounts', { email: input.email })).length > 0)
      throw new GpufleetError('CONFLICT', `An account with email ${input.email} already exists.`);
    const account: AccountRecord = {
      id: newId('acct_'),
      email: input.email,
      name: input.name ?? input.email,
      operator: input.operator ?? false,
      balance: input.balance ?? 0,
      pubKey: '',
      createdAt: new Date().toISOString(),
    };
    tx.put('accounts', account);
    return account;
  }

  /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
  async createKey(input: {
    accountId: string;
    name: string;
    scope: ApiKeyScope;
    expiresAt?: string | null;
    key?: string;
  }): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = input.key ?? generateKey();
    const record = newKeyRecord(input.accountId, input.name, input.scope, key, input.expiresAt ?? null);
    await this.store.transact((tx) => this.putKeyIn(tx, record));
    return { key, record };
  }

  private async putKeyIn(tx: StoreTx, record: ApiKeyRecord): Promise<void> {
    if (!(await tx.get('accounts', record.accountId))) throw new GpufleetError('NOT_FOUND', `Account ${record.accountId} does not exist.`);
    if ((await tx.list('apiKeys', { hash: record.hash })).length > 0) throw new GpufleetError('CONFLICT', 'That key value is already in use.');
    tx.put('apiKeys', record);
  }

  async revoke(keyId: string, by: Principal): Promise<ApiKeyRecord> {
    return this.store.transact(async (tx) => {
      const rec = await tx.get('apiKeys', keyId);
      if (!rec || (!by.operator && rec.accountId !== by.accountId))
        throw new GpufleetError('NOT_FOUND', `API key ${keyId} was not found.`);
      const revoked = { ...rec, revokedAt: rec.revokedAt ?? new Date().toISOString() };
      tx.put('apiKeys', revoked);
      // its console sessions end with it (a request on one would be refused anyway: ConsoleSessions.open)
      for (const s of await tx.list('consoleSessions', { keyId })) tx.delete('consoleSessions', s.id);
      return revoked;
    });
  }

  /**
   * GPUFLEET_BOOTSTRAP_KEY: when no key exists yet, an operator account and an admin key with exactly
   * this value are created. Without a value a key is generated and returned so the caller prints it once.
   */
  async bootstrap(value: string | undefined): Promise<string | null> {
    // one transaction: replicas starting together on one empty database create one key between them
    // (the others' transactions conflict, run again, and find it)
    return this.store.transact(async (tx) => {
      if ((await tx.count('apiKeys')) > 0) return null;
      let [operator] = await tx.list('accounts', { operator: true });
      operator ??= await this.createAccountIn(tx, { email: 'admin@gpufleet.local', name: 'operator', operator: true, balance: 0 });
      const key = value ?? generateKey();
      await this.putKeyIn(tx, newKeyRecord(operator.id, 'bootstrap', 'admin', key, null));
      return key;
    });
  }
}

function newKeyRecord(accountId: string, name: string, scope: ApiKeyScope, key: string, expiresAt: string | null): ApiKeyRecord {
  return {
    id: newId('key_'),
    accountId,
    name,
    prefix: key.slice(0, 8),
    hash: hashKey(key),
    scope,
    expiresAt,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: new Date().toISOString(),
  };
}

/** The key a request presents (the header's, else the query's), or why it is refused. */
function keyOf(header: string | undefined, queryKey: string | undefined, rawKey: boolean): string | { refused: string } {
  let key: string | undefined;
  if (header !== undefined) {
    const m = /^Bearer +(\S+)\s*$/i.exec(header);
    if (m) key = m[1];
    else if (rawKey && KEY_SHAPE.test(header.trim())) key = header.trim();
    else return { refused: rawKey ? 'The Authorization header must be "Bearer <API key>" or the key itself.' : 'The Authorization header must be "Bearer <API key>".' };
  } else key = queryKey;
  if (!key) return { refused: 'An API key is required: send Authorization: Bearer <key>.' };
  if (!KEY_SHAPE.test(key)) return { refused: 'The API key is malformed.' };
  return key;
}

// (a value that does not parse counts as stale, so it gets rewritten)
const stale = (lastUsedAt: string | null, now: number): boolean => lastUsedAt === null || !(now - Date.parse(lastUsedAt) < LAST_USED_EVERY_MS);

/** Why a key record no longer authenticates (revoked, expired), or null while it does. */
export function keyRefusal(rec: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: number): string | null {
  if (rec.revokedAt) return 'The API key has been revoked.';
  if (rec.expiresAt && Date.parse(rec.expiresAt) <= now) return `The API key expired at ${rec.expiresAt}.`;
  return null;
}

export function hasScope(p: Principal, needed: ApiKeyScope): boolean {
  return SCOPE_RANK[p.scope] >= SCOPE_RANK[needed];
}

export function keyView(rec: ApiKeyRecord) {
  const { hash: _hash, ...rest } = rec;
  return rest;
}
