// `gpufleet`: serve the control plane, manage keys and hosts, plan/apply/destroy stacks, check the store.
import { Command } from 'commander';
import { serveCommand } from './serve.ts';
import { keysCommand } from './keys.ts';
import { accountsCommand } from './accounts.ts';
import { hostsCommand } from './hosts.ts';
import { stackCommands } from './stack-commands.ts';
import { storeCommand } from './store.ts';
import { ApiError } from '../client/index.ts';

const program = new Command('gpufleet').description('Your own GPU cloud on your own hosts').showHelpAfterError();
program.addCommand(serveCommand());
program.addCommand(keysCommand());
program.addCommand(accountsCommand());
program.addCommand(hostsCommand());
program.addCommand(storeCommand());
for (const c of stackCommands()) program.addCommand(c);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof ApiError) {
    process.stderr.write(`error: ${e.message} (HTTP ${e.status} ${e.code})\n`);
    process.exitCode = 1;
  } else throw e;
}
