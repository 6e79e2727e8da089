// `gpufleet`: serve the control plane, manage keys and hosts, plan/apply/destroy stacks, check the store.
import { Command, CommanderError } from 'commander';
import { serveCommand } from './serve.ts';
import { keysCommand } from './keys.ts';
import { accountsCommand } from './accounts.ts';
import { hostsCommand } from './hosts.ts';
import { stackCommands } from './stack-commands.ts';
import { storeCommand } from './store.ts';
import { dbCommand } from './db.ts';
import { podsCommand } from './pods.ts';
import { endpointsCommand } from './endpoints.ts';
import { jobsCommand } from './jobs.ts';
import { publicEndpointsCommand, registriesCommand, templatesCommand, volumesCommand } from './resource-groups.ts';
import { cpusCommand, dataCentersCommand, gpusCommand } from './catalog.ts';
import { accountCommand, billingCommand, eventsCommand } from './activity.ts';
import { ApiError, MissingApiKeyError } from '../client/index.ts';
import { packageVersion } from './version.ts';
import { useNodeWebSockets } from './node-websocket.ts';

useNodeWebSockets();

const program = new Command('gpufleet').description('Your own GPU cloud on your own hosts').version(packageVersion(), '-V, --version').showHelpAfterError();
program.addCommand(serveCommand());
program.addCommand(keysCommand());
program.addCommand(accountsCommand());
program.addCommand(hostsCommand());
program.addCommand(storeCommand());
program.addCommand(dbCommand());
for (const c of stackCommands()) program.addCommand(c);
program.addCommand(podsCommand());
program.addCommand(endpointsCommand());
program.addCommand(jobsCommand());
for (const c of [templatesCommand(), volumesCommand(), registriesCommand(), publicEndpointsCommand(), gpusCommand(), cpusCommand(), dataCentersCommand(), billingCommand(), eventsCommand(), accountCommand()])
  program.addCommand(c);

/** wrong usage exits 2 (1 is an error from the API or a failed job); commander would exit 1 */
function usageExits2(c: Command): void {
  c.exitOverride();
  for (const sub of c.commands) usageExits2(sub);
}
usageExits2(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof ApiError) {
    process.stderr.write(`error: ${e.message} (HTTP ${e.status} ${e.code})\n`);
    process.exitCode = 1;
  } else if (e instanceof MissingApiKeyError) {
    // wrong usage, like a missing --identity file: one line, exit 2, nothing sent
    process.stderr.write(`error: ${e.message}\n`);
    process.exitCode = 2;
  } else if (e instanceof CommanderError) {
    // commander has printed the message (or the help) already
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else throw e;
}
