// myself and updateUserSettings. The account's SSH public keys (`pubKey`, newline-separated, as
// runpodctl writes them) are the one user setting the public clients change.
import type { AccountRecord } from '../../model/index.ts';
import { GpufleetError } from '../../model/index.ts';
import { holdsCompute } from '../../model/index.ts';
import { fail422 } from '../../model/index.ts';
import { required, type GqlContext } from './context.ts';

const MAX_PUBKEY = 65536;
/** `<type> <base64>[ comment]`: what authorized_keys accepts, loosely. */
const OPENSSH_KEY = /^(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9-@.]+)\s+[A-Za-z0-9+/]+={0,3}(\s.*)?$/;

export function checkPubKey(pubKey: string): void {
  if (pubKey.length > MAX_PUBKEY) fail422('user settings', [`$.input.pubKey: must be at most ${MAX_PUBKEY} characters`]);
  const bad = pubKey
    .split('\n')
    .map((l, i) => [l.trim(), i + 1] as const)
    .filter(([l]) => l !== '' && !OPENSSH_KEY.test(l));
  if (bad.length) fail422('user settings', bad.map(([, n]) => `$.input.pubKey: line ${n} is not an OpenSSH public key`));
}

async function account(ctx: GqlContext): Promise<AccountRecord> {
  const a = await ctx.services.store.get('accounts', ctx.principal.accountId);
  if (!a) throw new GpufleetError('NOT_FOUND', `Account ${ctx.principal.accountId} was not found.`);
  return a;
}

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
      return ctx.services.store.transact(async (tx) => {
        const a = await tx.get('accounts', ctx.principal.accountId);
        if (!a) throw new GpufleetError('NOT_FOUND', `Account ${ctx.principal.accountId} was not found.`);
        const next = { ...a, pubKey };
        tx.put('accounts', next);
        return next;
      });
    },
  },
  User: {
    // the same figure GET /v2/account shows
    clientBalance: async (_: AccountRecord, _a: unknown, ctx: GqlContext) => (await ctx.services.billing.balance(ctx.principal)).clientBalance,
    currentSpendPerHr: async (_: AccountRecord, _a: unknown, ctx: GqlContext) =>
      round((await ctx.services.pods.list(ctx.principal)).reduce((sum, p) => sum + (holdsCompute(p.status) ? p.costPerHr : 0), 0)),
    spendLimit: () => null,
    notifyPodsStale: () => false,
    notifyPodsGeneral: () => false,
    notifyLowBalance: () => false,
    networkVolumes: (_: AccountRecord, _a: unknown, ctx: GqlContext) => ctx.services.networkVolumes.list(ctx.principal),
  },
};
