// Typed calls for accounts, credits and limits (operators): `POST/GET /v2/accounts`,
// `POST /v2/accounts/{id}/credits`, `GET/PATCH /v2/accounts/{id}/limits`. Used by `gpufleet accounts`.
import type { AccountLimitsPatchInput, AccountRecord } from '../model/index.ts';
import type { ApiClient } from './api-client.ts';

export interface AccountWithBalance extends AccountRecord {
  /** USD accrued so far */
  usage: number;
  /** credits (balance) − usage: what is left; job submission stops at 0 */
  clientBalance: number;
}

export interface AccountCreate {
  email: string;
  name?: string;
  /** starting credits, USD */
  balance?: number;
  operator?: boolean;
}

export class AccountsApi {
  constructor(private readonly client: ApiClient) {}

  create(input: AccountCreate): Promise<AccountRecord> {
    return this.client.post<AccountRecord>('/v2/accounts', input);
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.client.get<{ accounts: AccountRecord[] }>('/v2/accounts')).accounts;
  }

  /** `GET /v2/accounts/{id}/limits`: each limit beside its use (docs/teams.md); the account itself or an operator */
  limits(accountId: string): Promise<Record<string, unknown>> {
    return this.client.get<Record<string, unknown>>(`/v2/accounts/${encodeURIComponent(accountId)}/limits`);
  }

  /** `PATCH /v2/accounts/{id}/limits` (operators): each field given sets that limit, null clears it */
  setLimits(accountId: string, patch: AccountLimitsPatchInput): Promise<Record<string, unknown>> {
    return this.client.patch<Record<string, unknown>>(`/v2/accounts/${encodeURIComponent(accountId)}/limits`, patch);
  }

  /** adds `amount` USD to the account's credits (negative takes some back) */
  credit(accountId: string, amount: number): Promise<AccountWithBalance> {
    return this.client.post<AccountWithBalance>(`/v2/accounts/${encodeURIComponent(accountId)}/credits`, { amount });
  }
}
