// Credits (spec 5.6: "the job interface requires an account with credits"). An account's `balance` is
// its prepaid credits in USD; usage accrues in billing records (billing.ts); what is left is
// `balance − usage` (GET /v2/account `clientBalance`). Operators grant credits (may be negative).
// Job submission (run, runsync, retry) is refused with 402 CREDITS_EXHAUSTED once nothing is left;
// operator accounts are never limited. docs/billing.md, "Credits".
import { accountCreditSchema, check, compile, GpufleetError, type AccountRecord } from '../model/index.ts';
import type { Store } from '../store/index.ts';
import type { Principal } from './api-keys.ts';
import { accountUsage } from './billing.ts';

const validateCredit = compile<{ amount: number }>(accountCreditSchema);

/** how long a computed balance is trusted for the submission check (summing usage reads every record) */
export const CREDIT_CHECK_CACHE_MS = 1000;

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export interface AccountBalanceView extends AccountRecord {
  usage: number;
  clientBalance: number;
}

export class AccountCredits {
  private readonly cache = new Map<string, { left: number; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  /** adds `amount` USD (may be negative) to the account's credits; answers the account with what is left */
  async grant(accountId: string, body: unknown): Promise<AccountBalanceView> {
    const { amount } = check(validateCredit, body, 'credit');
    const account = await this.store.transact(async (tx) => {
      const cur = await tx.get('accounts', accountId);
      if (!cur) throw new GpufleetError('NOT_FOUND', `Account ${accountId} does not exist.`);
      const next = { ...cur, balance: round(cur.balance + amount) };
      tx.put('accounts', next);
      return next;
    });
    this.cache.delete(accountId);
    return this.view(account);
  }

  async view(account: AccountRecord): Promise<AccountBalanceView> {
    const usage = round(await accountUsage(this.store, account.id, this.clock()));
    return { ...account, usage, clientBalance: round(account.balance - usage) };
  }

  /** drops the cached balance (a charge was just written): the next check reads it again */
  forget(accountId: string): void {
    this.cache.delete(accountId);
  }

  /** throws CREDITS_EXHAUSTED (402) unless the caller is an operator or has credits left */
  async assertCanSubmit(principal: Principal): Promise<void> {
    if (principal.operator) return;
    const now = this.clock();
    let hit = this.cache.get(principal.accountId);
    if (!hit || now - hit.at >= CREDIT_CHECK_CACHE_MS) {
      const account = await this.store.get('accounts', principal.accountId);
      const left = account ? account.balance - (await accountUsage(this.store, account.id, now)) : 0;
      hit = { left, at: now };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(principal.accountId, hit);
    }
    if (hit.left <= 0) {
      throw new GpufleetError(
        'CREDITS_EXHAUSTED',
        `The account's credits are used up (${round(hit.left)} USD left); no job is accepted until an operator adds credits (POST /v2/accounts/${principal.accountId}/credits).`,
        { fields: { accountId: principal.accountId, clientBalance: round(hit.left) } },
      );
    }
  }
}
