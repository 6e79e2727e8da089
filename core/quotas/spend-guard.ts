// The spend guard (docs/teams.md, "Credits" and "Monthly budget"): a loop that looks at every account
// with money at stake and acts on what it finds, level-triggered like the reconciler, so a restart or
// a second replica converges the same way.
// - Credits: a tenant account (operators are never limited) with nothing left (clientBalance ≤ 0) has
//   its pods that cost money (costPerHr > 0; admission lets free ones start at 0 credits) stopped (never terminated: disks and volumes kept) and its load-balancing endpoints'
//   workers retired; admission refuses new ones until an operator adds credits. Queue endpoints are
//   left to the job side: their jobs hold credits at submission, as before.
// - Monthly budget: the highest threshold reached this calendar month (50, 80, 100 %) is written on the
//   account (`budgetAlert`) once, and that write is the `budget.threshold` event (from the store's
//   commit, core/observability/events); at 100 % admission refuses new work, and with budgetAction
//   `stop` the account's pods are stopped too.
import { BUDGET_THRESHOLDS, type AccountRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { spendable } from '../billing/index.ts';
import { quotaUsage } from './quota-usage.ts';

/** What the guard does to an account's running work (wired to PodService and WorkerService). */
export interface SpendActions {
  /** stops the account's placed pods with this reason, at this time (`paidOnly`: only those costing money); answers how many */
  stopPods(accountId: string, reason: string, nowMs: number, opts?: { paidOnly?: boolean }): Promise<number>;
  /** retires the workers of the account's load-balancing endpoints; answers how many */
  stopLoadBalancers(accountId: string, reason: string): Promise<number>;
}

export interface SpendGuardOptions {
  clock?: () => number;
  /** ms between passes; default 5000 */
  intervalMs?: number;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** the threshold already announced for this month and this budget (a changed budget starts its thresholds over) */
const announcedPercent = (a: AccountRecord, month: string, budget: number): number =>
  a.budgetAlert?.month === month && a.budgetAlert.budget === budget ? a.budgetAlert.percent : 0;

const round2 = (n: number) => Math.round(n * 100) / 100;

export class SpendGuard {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly clock: () => number;

  constructor(
    private readonly store: Store,
    private readonly actions: SpendActions,
    private readonly opts: SpendGuardOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    const every = this.opts.intervalMs ?? 5000;
    const loop = () => {
      this.timer = setTimeout(() => {
        this.running = this.tick()
          .catch((err: unknown) => this.opts.logger?.warn({ err }, 'spend guard pass failed'))
          .finally(() => {
            this.running = null;
            if (this.timer) loop();
          });
      }, every);
      this.timer.unref();
    };
    loop();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every account (tests call it with the clock where they want it). */
  async tick(): Promise<void> {
    for (const account of await this.store.list('accounts')) {
      try {
        await this.checkAccount(account);
      } catch (err) {
        this.opts.logger?.warn({ err, accountId: account.id }, 'spend guard: checking an account failed');
      }
    }
  }

  private async checkAccount(account: AccountRecord): Promise<void> {
    const now = this.clock();
    if (!account.operator) {
      const { left } = await spendable(this.store, account.id, now);
      if (left <= 0) {
        const reason = `stopped: the account's credits are used up (${round2(left)} USD left); disks and volumes are kept, start it again once credits are added`;
        // a free pod (0 USD/h) spends nothing: admission lets it start at 0 credits, so it keeps running
        const pods = await this.actions.stopPods(account.id, reason, now, { paidOnly: true });
        const workers = await this.actions.stopLoadBalancers(account.id, "the account's credits are used up");
        if (pods + workers > 0) this.opts.logger?.info({ accountId: account.id, pods, workers, left }, 'credits used up: pods stopped, load-balancing workers retired');
      }
    }
    const budget = account.limits?.monthlyBudget;
    if (budget === undefined) return;
    const u = await quotaUsage(this.store, account.id, now);
    const percent = budget > 0 ? (u.monthSpend / budget) * 100 : Infinity;
    const reached = [...BUDGET_THRESHOLDS].reverse().find((t) => percent >= t) ?? 0;
    if (reached > announcedPercent(account, u.month, budget)) await this.announce(account.id, u.month, reached, u.monthSpend, budget);
    if (reached >= 100 && account.limits?.budgetAction === 'stop') {
      const reason = `stopped: the account's monthly budget of ${budget} USD for ${u.month} is used up (${round2(u.monthSpend)} USD spent); disks and volumes are kept`;
      const pods = await this.actions.stopPods(account.id, reason, now);
      if (pods > 0) this.opts.logger?.info({ accountId: account.id, pods, month: u.month }, 'monthly budget used up: pods stopped (budgetAction stop)');
    }
  }

  /** Writes the threshold on the account once (a replica that lost the race finds it written): the event comes from that commit. */
  private async announce(accountId: string, month: string, percent: number, spent: number, budget: number): Promise<void> {
    await this.store.transact(
      async (tx) => {
        const cur = await tx.get('accounts', accountId);
        if (!cur) return;
        if (percent <= announcedPercent(cur, month, budget)) return;
        tx.put('accounts', { ...cur, budgetAlert: { month, percent, spent: round2(spent), budget, at: new Date(this.clock()).toISOString() } });
      },
      { actor: 'system' },
    );
  }
}
