// `gpufleet keys create|list|revoke`
import { Command } from 'commander';
import { ApiClient } from '../client/index.ts';
import { newTable } from './output.ts';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scope: string;
  accountId: string;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('API keys');
  keys
    .command('create')
    .description('create an API key; it is printed once')
    .requiredOption('--name <name>', 'a label for the key')
    .option('--scope <scope>', 'read | read_write | admin', 'read_write')
    .option('--expires <date-time>', 'RFC 3339 expiry, e.g. 2027-01-01T00:00:00Z')
    .option('--account <id>', 'operators: create the key for another account')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; scope: string; expires?: string; account?: string; json?: boolean }) => {
      const created = await new ApiClient().post<KeyRow & { key: string }>('/v2/keys', {
        name: o.name,
        scope: o.scope,
        ...(o.expires ? { expiresAt: o.expires } : {}),
        ...(o.account ? { accountId: o.account } : {}),
      });
      if (o.json) console.log(JSON.stringify(created, null, 2));
      else console.log(`${created.key}\n\nkey ${created.id} (${created.scope}) created. This is the only time the key is shown.`);
    });
  keys
    .command('list')
    .description('list API keys (never their secrets)')
    .option('--account <id>', 'operators: another account')
    .option('--json', 'print JSON')
    .action(async (o: { account?: string; json?: boolean }) => {
      const { keys: rows } = await new ApiClient().get<{ keys: KeyRow[] }>(`/v2/keys${o.account ? `?accountId=${encodeURIComponent(o.account)}` : ''}`);
      if (o.json) return console.log(JSON.stringify(rows, null, 2));
      const t = newTable({ head: ['id', 'name', 'prefix', 'scope', 'expires', 'revoked'] });
      for (const k of rows) t.push([k.id, k.name, `${k.prefix}…`, k.scope, k.expiresAt ?? '-', k.revokedAt ?? '-']);
      console.log(t.toString());
    });
  keys
    .command('revoke <id>')
    .description('revoke an API key')
    .action(async (id: string) => {
      await new ApiClient().delete(`/v2/keys/${encodeURIComponent(id)}`);
      console.log(`key ${id} revoked`);
    });
  return keys;
}
