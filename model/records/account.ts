// Accounts own keys and resources. An operator account may also manage the fleet and other accounts.
export interface AccountRecord {
  id: string;
  email: string;
  name: string;
  operator: boolean;
  /** prepaid credits in USD; usage draws them down */
  balance: number;
  pubKey: string;
  createdAt: string;
}

export const API_KEY_SCOPES = ['read', 'read_write', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** what a request needs; a key's scope grants everything at or below its rank */
export const SCOPE_RANK: Record<ApiKeyScope, number> = { read: 0, read_write: 1, admin: 2 };

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** first characters of the key, shown in listings so people can tell keys apart */
  prefix: string;
  /** sha256 hex of the whole key; the key itself is never stored */
  hash: string;
  scope: ApiKeyScope;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

/** who a request acts as: the account and key it authenticated with */
export interface Principal {
  accountId: string;
  keyId: string;
  scope: ApiKeyScope;
  operator: boolean;
}
