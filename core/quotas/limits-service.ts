// GET and PATCH /v2/accounts/{id}/limits (docs/teams.md): each limit beside what the account uses
// now. Operators read any account's and change them (no restart: admission reads the account record
// in each transaction); an account reads its own. A field sent as null clears that limit.
import { accountLimitsPatchSchema, check, compile, fail422, GpufleetError } from '../../model/index.ts';
import type { AccountLimits, AccountLimitsPatchInput, AccountRecord, BudgetAction, Principal } from '../../model/index.ts';
import { gpuTypeById } from '../../fleet/index.ts';
import type { Store, StoreReader } from '../../store/index.ts';
import { quotaUsage } from './quota-usage.ts';

const validatePatch = compile<AccountLimitsPatchInput>(accountLimitsPatchSchema);

export interface LimitLine {
  /** null: unlimited */
  limit: number | null;
  used: number;
}

export interface AccountLimitsView {
  accountId: string;
  /** the calendar month (UTC) monthlyBudget.used counts */
  month: string;
  budgetAction: BudgetAction;
  limits: {
    gpus: LimitLine;
    gpusByType: Record<string, LimitLine>;
    interruptibleGpus: LimitLine;
    pods: LimitLine;
    workers: LimitLine;
    volumeGb: LimitLine;
    spendPerHour: LimitLine;
    monthlyBudget: LimitLine;
  };
}

const SCALAR_LIMITS = ['gpus', 'interruptibleGpus', 'pods', 'workers', 'volumeGb', 'spendPerHour', 'monthlyBudget'] as const;

export class AccountLimitsService {
  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The account's limits and use: its own, or any for an operator (another account's id is 404). */
  async get(principal: Principal, accountId: string): Promise<AccountLimitsView> {
    if (!principal.operator && principal.accountId !== accountId) throw notFound(accountId);
    const account = await this.store.get('accounts', accountId);
    if (!account) throw notFound(accountId);
    return this.view(this.store, account);
  }

  /** Operators: sets the limits the body names (null clears one) and answers the view. */
  async patch(accountId: string, body: unknown, actor?: string): Promise<AccountLimitsView> {
    const input = check(validatePatch, body, 'limits');
    const unknownTypes = Object.keys(input.gpusByType ?? {}).filter((id) => !gpuTypeById(id));
    if (unknownTypes.length) fail422('limits', unknownTypes.map((id) => `$.gpusByType[${JSON.stringify(id)}]: is not a GPU type id of the catalog (GET /v2/catalog/gpu-types)`));
    return this.store.transact(
      async (tx) => {
        const account = await tx.get('accounts', accountId);
        if (!account) throw notFound(accountId);
        const next: AccountRecord = { ...account, limits: merged(account.limits ?? {}, input) };
        if (!hasAny(next.limits!)) delete next.limits;
        tx.put('accounts', next);
        return this.view(tx, next);
      },
      actor ? { actor } : {},
    );
  }

  private async view(reader: StoreReader, account: AccountRecord): Promise<AccountLimitsView> {
    const l = account.limits ?? {};
    const u = await quotaUsage(reader, account.id, this.clock());
    const line = (limit: number | undefined, used: number): LimitLine => ({ limit: limit ?? null, used });
    const byType: Record<string, LimitLine> = {};
    for (const id of new Set([...Object.keys(l.gpusByType ?? {}), ...Object.keys(u.gpusByType)]).values())
      byType[id] = line(l.gpusByType?.[id], u.gpusByType[id] ?? 0);
    return {
      accountId: account.id,
      month: u.month,
      budgetAction: l.budgetAction ?? 'keep',
      limits: {
        gpus: line(l.gpus, u.gpus),
        gpusByType: byType,
        interruptibleGpus: line(l.interruptibleGpus, u.interruptibleGpus),
        pods: line(l.pods, u.pods),
        workers: line(l.workers, u.workers),
        volumeGb: line(l.volumeGb, u.volumeGb),
        spendPerHour: line(l.spendPerHour, u.spendPerHour),
        monthlyBudget: line(l.monthlyBudget, u.monthSpend),
      },
    };
  }
}

/** The limits after a patch: a field given replaces, null removes, absent keeps; gpusByType merges per type. */
function merged(cur: AccountLimits, p: AccountLimitsPatchInput): AccountLimits {
  const next: AccountLimits = { ...cur };
  for (const k of SCALAR_LIMITS) {
    const v = p[k];
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  if (p.budgetAction === null) delete next.budgetAction;
  else if (p.budgetAction !== undefined) next.budgetAction = p.budgetAction;
  if (p.gpusByType === null) delete next.gpusByType;
  else if (p.gpusByType !== undefined) {
    const types: Record<string, number> = { ...(cur.gpusByType ?? {}) };
    for (const [id, n] of Object.entries(p.gpusByType)) {
      if (n === null || n === undefined) delete types[id];
      else types[id] = n;
    }
    if (Object.keys(types).length) next.gpusByType = types;
    else delete next.gpusByType;
  }
  return next;
}

const hasAny = (l: AccountLimits): boolean => Object.keys(l).length > 0;

function notFound(id: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `Account ${id} was not found.`);
}
