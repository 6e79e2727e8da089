// Typed calls for accounts and credits (operators): `POST/GET /v2/accounts`,
// `POST /v2/accounts/{id}/credits`. Used by `gpufleet accounts`.
import type { AccountRecord } from '../model/index.ts';
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

  /** adds `amount` USD to the account's credits (negative takes some back) */
  credit(accountId: string, amount: number): Promise<AccountWithBalance> {
    return this.client.post<AccountWithBalance>(`/v2/accounts/${encodeURIComponent(accountId)}/credits`, { amount });
  }
}
