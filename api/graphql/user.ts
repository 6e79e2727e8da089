// myself and updateUserSettings. The account's SSH public keys (`pubKey`, newline-separated, as
// runpodctl writes them) are the one user setting the public clients change (core/connect/ssh-keys.ts).
import type { AccountRecord } from '../../model/index.ts';
import { checkPubKey, quotaUsage } from '../../core/index.ts';
import { required, type GqlContext } from './context.ts';

const account = (ctx: GqlContext): Promise<AccountRecord> => ctx.services.sshKeys.account(ctx.principal);

const round = (n: number) => Math.round(n * 10000) / 10000;

export const userResolvers = {
  Query: {
    myself: (_: unknown, _a: unknown, ctx: GqlContext) => account(ctx),
  },
  Mutation: {
    updateUserSettings: async (_: unknown, { input }: { input?: { pubKey?: string | null } | null }, ctx: GqlContext) => {
      const { pubKey } = required(input);
      if (pubKey === null || pubKey === undefined) return account(ctx);
      checkPubKey(pubKey);
      return ctx.services.sshKeys.set(ctx.principal, pubKey);
    },
  },
  User: {
    // the same figure GET /v2/account shows
    clientBalance: async (_: AccountRecord, _a: unknown, ctx: GqlContext) => (await ctx.services.billing.balance(ctx.principal)).clientBalance,
    // USD/h of everything that accrues now (pods, workers, volumes): the use GET /v2/accounts/{id}/limits shows beside spendPerHour
    currentSpendPerHr: async (a: AccountRecord, _a: unknown, ctx: GqlContext) => round((await quotaUsage(ctx.services.store, a.id, ctx.services.admission.now())).spendPerHour),
    // the operator-set limit (docs/teams.md); null: none
    spendLimit: (a: AccountRecord) => a.limits?.spendPerHour ?? null,
    notifyPodsStale: () => false,
    notifyPodsGeneral: () => false,
    notifyLowBalance: () => false,
    networkVolumes: (_: AccountRecord, _a: unknown, ctx: GqlContext) => ctx.services.networkVolumes.list(ctx.principal),
  },
};
