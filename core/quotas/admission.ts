// Admission (docs/teams.md): new work an account asks for (a pod created or started, a serverless
// worker started, a network volume created or grown, a resize) is checked against the account's limits,
// its monthly budget and its credits inside the transaction that would write it, before anything is
// written. Transactions are serialisable on both stores (the embedded store runs them one at a time;
// PostgreSQL runs them SERIALIZABLE and runs again the one that lost a conflict), so of concurrent
// requests only those that fit together pass, on any number of replicas. A pod moved by the fleet
// (GPU health) is not new work and is never asked here.
import { GpufleetError, type AccountLimits, type AccountRecord } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import { spendable } from '../billing/index.ts';
import { quotaUsage, type QuotaUsage } from './quota-usage.ts';

/** What the new work adds to the account's use. */
export interface Demand {
  accountId: string;
  /** what it is, for the refusal's wording: "pod", "worker", "network volume", "resize" */
  what: string;
  /** a pod whose own use counts as free: the pod being resized (the demand is its new size), or the one a dry run replaces */
  replaces?: string;
  /** GPUs it holds (type id and count); interruptible pods count under interruptibleGpus */
  gpu?: { typeId: string; count: number; interruptible?: boolean };
  /** 1 for a pod placed (workers are not pods here) */
  pods?: number;
  /** 1 for a worker started */
  workers?: number;
  /** network volume GB added */
  volumeGb?: number;
  /** USD per hour it adds once it runs */
  spendPerHour: number;
  /** the account must have one hour of `spendPerHour` left in credits (pods, load-balancing workers) */
  needsCredits?: boolean;
}

const round = (n: number, places = 4) => Math.round(n * 10 ** places) / 10 ** places;

/** how long an account's credits left are trusted when they cover twice what is asked (summing usage reads every billing record) */
export const CREDITS_LEFT_CACHE_MS = 1000;

export class Admission {
  /** credits left per account, and when they were summed (quota clock) */
  private readonly creditCache = new Map<string, { left: number; at: number; balance: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * What the account has left: summed in the transaction, or, when a sum of the last second covered
   * twice the amount asked, that sum (an account far from 0 does not read its whole billing history per
   * create; near 0 the check is exact, as job submissions' is: core/billing/credits.ts).
   */
  private async creditsLeft(tx: StoreReader, account: AccountRecord, needed: number, now: number): Promise<number> {
    const hit = this.creditCache.get(account.id);
    // a grant (the balance changed) is read at once
    if (hit && hit.balance === account.balance && now - hit.at >= 0 && now - hit.at < CREDITS_LEFT_CACHE_MS && hit.left >= 2 * needed) return hit.left;
    const { left } = await spendable(tx, account.id, now);
    if (this.creditCache.size > 10_000) this.creditCache.clear();
    this.creditCache.set(account.id, { left, at: now, balance: account.balance });
    return left;
  }

  now(): number {
    return this.clock();
  }

  /** Throws QUOTA_EXCEEDED (403), BUDGET_EXHAUSTED or CREDITS_EXHAUSTED (402) when the demand does not fit; else nothing. */
  async admit(tx: StoreReader, d: Demand): Promise<void> {
    const account = await tx.get('accounts', d.accountId);
    if (!account) return;
    const limits = account.limits ?? {};
    const credits = d.needsCredits === true && !account.operator && d.spendPerHour > 0;
    if (!credits && !hasLimits(limits)) return;
    const now = this.clock();
    if (hasLimits(limits)) check(limits, await quotaUsage(tx, d.accountId, now, d.replaces), d, account);
    if (credits) {
      const left = await this.creditsLeft(tx, account, d.spendPerHour, now);
      if (left < d.spendPerHour)
        throw new GpufleetError(
          'CREDITS_EXHAUSTED',
          `Starting this ${d.what} needs one hour of its cost in credits (${round(d.spendPerHour)} USD); the account has ${round(left, 6)} USD left. An operator adds credits with POST /v2/accounts/${d.accountId}/credits.`,
          { fields: { accountId: d.accountId, clientBalance: round(left, 6), needed: round(d.spendPerHour) }, extensions: { clientBalance: round(left, 6), needed: round(d.spendPerHour) } },
        );
    }
  }
}

export function hasLimits(l: AccountLimits): boolean {
  return (
    l.gpus !== undefined ||
    l.interruptibleGpus !== undefined ||
    l.pods !== undefined ||
    l.workers !== undefined ||
    l.volumeGb !== undefined ||
    l.spendPerHour !== undefined ||
    l.monthlyBudget !== undefined ||
    Object.keys(l.gpusByType ?? {}).length > 0
  );
}

function check(l: AccountLimits, u: QuotaUsage, d: Demand, account: AccountRecord): void {
  if (l.monthlyBudget !== undefined && u.monthSpend >= l.monthlyBudget)
    throw new GpufleetError(
      'BUDGET_EXHAUSTED',
      `The account's monthly budget of ${l.monthlyBudget} USD for ${u.month} is used up (${round(u.monthSpend, 2)} USD spent): no new ${d.what} is accepted until the month ends or an operator raises it.`,
      { fields: { accountId: account.id }, extensions: { limit: { name: 'monthlyBudget', value: l.monthlyBudget, used: u.monthSpend, month: u.month } } },
    );
  const g = d.gpu;
  if (g && g.count > 0) {
    if (g.interruptible) exceeds('interruptibleGpus', l.interruptibleGpus, u.interruptibleGpus, g.count, d, account, 'interruptible GPUs');
    else {
      exceeds('gpus', l.gpus, u.gpus, g.count, d, account, 'GPUs');
      exceeds(`gpusByType.${g.typeId}`, l.gpusByType?.[g.typeId], u.gpusByType[g.typeId] ?? 0, g.count, d, account, `${g.typeId} GPUs`);
    }
  }
  if (d.pods) exceeds('pods', l.pods, u.pods, d.pods, d, account, 'pods');
  if (d.workers) exceeds('workers', l.workers, u.workers, d.workers, d, account, 'serverless workers');
  if (d.volumeGb) exceeds('volumeGb', l.volumeGb, u.volumeGb, d.volumeGb, d, account, 'GB of network volumes');
  if (d.spendPerHour > 0) exceeds('spendPerHour', l.spendPerHour, u.spendPerHour, round(d.spendPerHour), d, account, 'USD per hour');
}

function exceeds(name: string, value: number | undefined, used: number, requested: number, d: Demand, account: AccountRecord, unit: string): void {
  if (value === undefined || round(used + requested, 6) <= value) return;
  throw new GpufleetError(
    'QUOTA_EXCEEDED',
    `This ${d.what} would exceed the account's limit ${name} of ${value} ${unit}: ${round(used, 6)} in use, ${requested} more asked. An operator changes limits with PATCH /v2/accounts/${account.id}/limits.`,
    { fields: { accountId: account.id, limit: name }, extensions: { limit: { name, value, used: round(used, 6), requested } } },
  );
}

export type { QuotaUsage };
