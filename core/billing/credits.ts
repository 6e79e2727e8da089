// Credits (spec 5.6: "the job interface requires an account with credits"). An account's `balance` is
// its prepaid credits in USD; usage accrues in billing records (billing.ts); public model jobs hold
// their most possible cost until they end (credit-holds.ts); what is left is `balance − usage − held`
// (GET /v2/account and GraphQL `clientBalance`). Operators grant credits (may be negative).
// Job submission (run, runsync, retry) is refused with 402 CREDITS_EXHAUSTED once nothing is left, and
// a public model job also when its hold does not fit what is left; operator accounts are never
// limited. Running out never stops anything already accepted. docs/billing.md, "Credits";
// docs/security.md, "Credits are reserved, not only checked".
import { accountCreditSchema, check, compile, GpufleetError, type AccountRecord, type PublicEndpointRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { endHoldsOf, newHold, spendable } from './credit-holds.ts';
import type { Principal } from '../../model/index.ts';

const validateCredit = compile<{ amount: number }>(accountCreditSchema);

/** how long a computed balance is trusted for the submission check (summing usage reads every record) */
export const CREDIT_CHECK_CACHE_MS = 1000;

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export interface AccountBalanceView extends AccountRecord {
  usage: number;
  /** USD set aside by open holds of accepted public model jobs */
  held: number;
  clientBalance: number;
}

/** a public model job's hold, to be made with its submission */
export interface HoldRequest {
  entry: PublicEndpointRecord;
  amountMicros: number;
  /** the job, when it exists already (retry); else attached after the enqueue */
  jobId?: string;
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
    const s = await spendable(this.store, account.id, this.clock());
    return { ...account, usage: round(s.usage), held: round(s.held), clientBalance: round(account.balance - s.usage - s.held) };
  }

  /**
   * A public model job's hold, made in the transaction that checks the balance: answered with its id,
   * or 402 CREDITS_EXHAUSTED when what is left (credits − usage − open holds) is not above zero or
   * smaller than the hold. Transactions are serialisable in both stores, so of concurrent submissions
   * on any replicas only those whose holds fit together pass. Operators hold nothing.
   */
  async reserve(principal: Principal, hold: HoldRequest): Promise<string | null> {
    if (principal.operator) return null;
    const id = await this.store.transact(async (tx) => {
      const { left } = await spendable(tx, principal.accountId, this.clock());
      const leftMicros = Math.round(left * 1e6);
      if (leftMicros <= 0 || leftMicros < hold.amountMicros) throw exhausted(principal, left, hold.amountMicros / 1e6);
      const rec = newHold(principal.accountId, hold.entry, hold.amountMicros, hold.jobId ?? null, new Date(this.clock()).toISOString());
      tx.put('creditHolds', rec);
      return rec.id;
    });
    this.cache.delete(principal.accountId);
    return id;
  }

  /** the job a hold was made for, once enqueued; false when the hold is gone already (released by the sweep) */
  async attach(holdId: string, jobId: string): Promise<boolean> {
    return this.store.transact(async (tx) => {
      const h = await tx.get('creditHolds', holdId);
      if (!h) return false;
      tx.put('creditHolds', { ...h, jobId });
      return true;
    });
  }

  /** ends a hold whose job was never enqueued */
  async release(holdId: string): Promise<void> {
    const accountId = await this.store.transact(async (tx) => {
      const h = await tx.get('creditHolds', holdId);
      if (h) tx.delete('creditHolds', holdId);
      return h?.accountId;
    });
    if (accountId) this.cache.delete(accountId);
  }

  /** ends the holds of a job that ended without a charge (cancelled, failed, timed out, expired) */
  async releaseJob(jobId: string, accountId: string): Promise<number> {
    const n = await this.store.transact((tx) => endHoldsOf(tx, jobId));
    if (n) this.cache.delete(accountId);
    return n;
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
      const { left } = await spendable(this.store, principal.accountId, now);
      hit = { left, at: now };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(principal.accountId, hit);
    }
    if (hit.left <= 0) throw exhausted(principal, hit.left);
  }
}

function exhausted(principal: Principal, left: number, hold?: number): GpufleetError {
  const why =
    hold === undefined || left <= 0
      ? `The account's credits are used up (${round(left)} USD left, open holds counted)`
      : `This job holds up to ${round(hold)} USD until it ends, more than the account has left (${round(left)} USD, open holds counted)`;
  return new GpufleetError('CREDITS_EXHAUSTED', `${why}; no such job is accepted until an operator adds credits (POST /v2/accounts/${principal.accountId}/credits).`, {
    fields: { accountId: principal.accountId, clientBalance: round(left), ...(hold !== undefined ? { hold: round(hold) } : {}) },
  });
}
