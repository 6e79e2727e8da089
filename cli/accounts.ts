// `gpufleet accounts create|list|credit|limits|set-limits` (operators): accounts, their credits and limits (docs/billing.md,
// "Credits"). A negative credit takes credits back: `gpufleet accounts credit <id> -- -5`.
import { Command, InvalidArgumentError } from 'commander';
import { AccountsApi, ApiClient } from '../client/index.ts';
import { newTable } from './output.ts';
import { accountLimitsCommands } from './account-limits.ts';

function usd(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('an amount in USD, e.g. 25 or 2.5 (negative after --: -- -5)');
  return n;
}

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('accounts and their credits (operator key)');
  accounts
    .command('create')
    .description('create an account')
    .requiredOption('--email <email>', 'the account\'s email (unique)')
    .option('--name <name>', 'a display name (default: the email)')
    .option('--credits <usd>', 'starting credits in USD', usd)
    .option('--operator', 'an operator account (manages the fleet and other accounts)')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; name?: string; credits?: number; operator?: boolean; json?: boolean }) => {
      const a = await new AccountsApi(new ApiClient()).create({
        email: o.email,
        ...(o.name ? { name: o.name } : {}),
        ...(o.credits !== undefined ? { balance: o.credits } : {}),
        ...(o.operator ? { operator: true } : {}),
      });
      if (o.json) console.log(JSON.stringify(a, null, 2));
      else console.log(`account ${a.id} (${a.email}) created with ${a.balance} USD of credits`);
    });
  accounts
    .command('list')
    .description('list accounts with their credits')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const rows = await new AccountsApi(new ApiClient()).list();
      if (o.json) return console.log(JSON.stringify(rows, null, 2));
      const t = newTable({ head: ['id', 'email', 'name', 'operator', 'credits (USD)', 'created'] });
      for (const a of rows) t.push([a.id, a.email, a.name, a.operator ? 'yes' : '', String(a.balance), a.createdAt]);
      console.log(t.toString());
    });
  accounts
    .command('credit')
    .description('add credits to an account (negative takes back; put -- before a negative amount)')
    .argument('<id>', 'the account id')
    .argument('<usd>', 'the amount in USD', usd)
    .option('--json', 'print JSON')
    .action(async (id: string, amount: number, o: { json?: boolean }) => {
      const a = await new AccountsApi(new ApiClient()).credit(id, amount);
      if (o.json) console.log(JSON.stringify(a, null, 2));
      else console.log(`account ${a.id}: credits ${a.balance} USD, used ${a.usage} USD, left ${a.clientBalance} USD`);
    });
  for (const c of accountLimitsCommands()) accounts.addCommand(c);
  return accounts;
}
