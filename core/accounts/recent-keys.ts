// The principals of keys this replica authenticated a moment ago, so a busy key's requests skip the
// store (two reads and as many promise hops per request; a round trip each with PostgreSQL). An
// entry is dropped the moment the store shows a write to its key or its account (revoked, expired
// by a change, scope, operator, account deleted): the store's stage listener hears this replica's
// writes as soon as they are visible, and onCommit hears the other replicas' (PostgreSQL's change
// feed). An entry lives RECENT_KEY_MS at most besides, so a change another replica made and whose
// notification was lost still applies within that; it never outlives the key's expiry, nor the
// moment its `lastUsedAt` is due to be written again (that write goes through ApiKeys.authenticate).
import type { Principal } from '../../model/index.ts';
import type { Store, StoreChange } from '../../store/index.ts';

/** how long an authenticated key is taken on trust without the store at most */
export const RECENT_KEY_MS = 1000;
/** the cache is emptied when it reaches this size */
const RECENT_KEYS_MAX = 10_000;

interface Recent {
  principal: Principal;
  /** Date.now() before which the entry may answer */
  until: number;
}

export class RecentKeys {
  private readonly byKey = new Map<string, Recent>();
  /** the cached keys of each key id and of each account: a write forgets those only, not a scan of the cache */
  private readonly ofKeyId = new Map<string, Set<string>>();
  private readonly ofAccount = new Map<string, Set<string>>();
  /** counts the writes to keys and accounts: a lookup that began before one must not be remembered */
  private writes = 0;

  constructor(store: Pick<Store, 'onCommit' | 'onStage'>) {
    const forget = (changes: StoreChange[]) => {
      for (const c of changes)
        if (c.collection === 'apiKeys' || c.collection === 'accounts') {
          this.writes++;
          this.forget(c.collection, c.id);
        }
    };
    store.onCommit(forget);
    store.onStage?.(forget);
  }

  /** the principal of `key`, when it was authenticated moments ago and nothing about it changed since */
  get(key: string, now: number): Principal | undefined {
    const r = this.byKey.get(key);
    if (r === undefined) return undefined;
    if (now < r.until) return { ...r.principal };
    this.drop(key);
    return undefined;
  }

  /** a mark to take before reading the store, for `set` */
  mark(): number {
    return this.writes;
  }

  /**
   * Remembers a principal the store vouched for, until `until` (capped at RECENT_KEY_MS from now),
   * unless a key or an account was written since `mark` (what was read may be stale already).
   */
  set(key: string, principal: Principal, mark: number, now: number, until: number): void {
    if (mark !== this.writes) return;
    if (this.byKey.size >= RECENT_KEYS_MAX) {
      this.byKey.clear();
      this.ofKeyId.clear();
      this.ofAccount.clear();
    }
    this.drop(key);
    this.byKey.set(key, { principal: { ...principal }, until: Math.min(until, now + RECENT_KEY_MS) });
    addTo(this.ofKeyId, principal.keyId, key);
    addTo(this.ofAccount, principal.accountId, key);
  }

  /** @internal entries held (a test's measure that forgetting leaves nothing behind) */
  get size(): { keys: number; keyIds: number; accounts: number } {
    return { keys: this.byKey.size, keyIds: this.ofKeyId.size, accounts: this.ofAccount.size };
  }

  private forget(collection: 'apiKeys' | 'accounts', id: string): void {
    const keys = (collection === 'apiKeys' ? this.ofKeyId : this.ofAccount).get(id);
    if (keys) for (const key of [...keys]) this.drop(key);
  }

  private drop(key: string): void {
    const r = this.byKey.get(key);
    if (!r) return;
    this.byKey.delete(key);
    removeFrom(this.ofKeyId, r.principal.keyId, key);
    removeFrom(this.ofAccount, r.principal.accountId, key);
  }
}

function addTo(index: Map<string, Set<string>>, id: string | undefined, key: string): void {
  if (id === undefined) return;
  let keys = index.get(id);
  if (!keys) index.set(id, (keys = new Set()));
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, id: string | undefined, key: string): void {
  if (id === undefined) return;
  const keys = index.get(id);
  if (!keys) return;
  keys.delete(key);
  if (!keys.size) index.delete(id);
}
