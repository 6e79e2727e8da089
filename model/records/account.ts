// Accounts own keys and resources. An operator account may also manage the fleet and other accounts.
export interface AccountRecord {
  id: string;
  email: string;
  name: string;
  operator: boolean;
  /** prepaid credits in USD; usage draws them down */
  balance: number;
  pubKey: string;
  /** the VXLAN network identifier of the account's overlay (docs/networking.md), unique in the fleet; given with its first globally-networked pod */
  overlayVni?: number;
  createdAt: string;
  /** operator-set limits (docs/teams.md); absent or a field absent: unlimited (records written before limits existed too) */
  limits?: AccountLimits;
  /** the highest monthly-budget threshold already announced (budget.threshold events), and for which month */
  budgetAlert?: BudgetAlert;
}

/** What happens to running pods once the monthly budget is used up: kept running (default) or stopped (disks and volumes kept). */
export const BUDGET_ACTIONS = ['keep', 'stop'] as const;
export type BudgetAction = (typeof BUDGET_ACTIONS)[number];

/** Per-account limits; each one absent is unlimited (docs/teams.md, "Quotas"). */
export interface AccountLimits {
  /** GPUs held at once by on-demand pods and serverless workers, all types */
  gpus?: number;
  /** GPUs held at once per GPU type id (on-demand pods and workers) */
  gpusByType?: Record<string, number>;
  /** GPUs held at once by interruptible pods (counted here, not under gpus) */
  interruptibleGpus?: number;
  /** pods placed at once (serverless workers not counted) */
  pods?: number;
  /** serverless workers in service, all endpoints together */
  workers?: number;
  /** network volume GB, all volumes together */
  volumeGb?: number;
  /** USD per hour of everything that accrues now (pods, workers, volumes) */
  spendPerHour?: number;
  /** USD per calendar month (UTC) */
  monthlyBudget?: number;
  /** running pods once the monthly budget is used up; default keep */
  budgetAction?: BudgetAction;
}

/** thresholds of the monthly budget announced as events, in percent */
export const BUDGET_THRESHOLDS = [50, 80, 100] as const;

export interface BudgetAlert {
  /** the calendar month (UTC) as YYYY-MM */
  month: string;
  /** the highest threshold reached and announced that month */
  percent: number;
  /** USD spent that month when it was announced, and the budget then */
  spent: number;
  budget: number;
  /** when it was announced */
  at: string;
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
  /** `console`: the request came with a web console session of this key (docs/console.md); events say so */
  via?: 'console';
  /** with `via`: the key's prefix, which the events of its changes name */
  keyPrefix?: string;
}

/**
 * A web console session (docs/console.md, "Sessions and security"): an API key exchanged for a
 * cookie. The record's id is the sha256 of the cookie's value (the value itself is never stored);
 * the session acts with its key's current scope, and ends at `expiresAt`, at sign-out, or when its
 * key is revoked or expires.
 */
export interface ConsoleSessionRecord {
  /** sha256 hex of the session's secret (the cookie's value) */
  id: string;
  accountId: string;
  keyId: string;
  /** the key's prefix (ApiKeyRecord.prefix), named by the audit trail */
  keyPrefix: string;
  /** the CSRF token state-changing requests carry as X-CSRF-Token */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}
