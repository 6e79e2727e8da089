// `gpufleet pods ssh <id> [-- command…]` and `gpufleet pods ssh <id> --proxy` (docs/connect.md,
// "gpufleet pods ssh"). Both go through the control plane with the API key, and neither needs a port
// published on the host:
// - without --proxy: a shell (a login shell, bash when the image has one) or the command, in the
//   pod's container through the interactive exec session (GET /v2/pods/{id}/exec/ws), with a
//   terminal when this one is one. As with ssh, the command's words are joined with spaces and run by
//   the container's `sh -c`. Works on any image with a shell; needs no SSH server.
// - with --proxy: stdin and stdout bridged to the pod's port 22 (GET /v2/pods/{id}/ssh/tunnel), for
//   ssh's ProxyCommand: `ssh -o ProxyCommand='gpufleet pods ssh %h --proxy' root@<pod id>`, so scp,
//   rsync and VS Code Remote work on images that run sshd with the account's keys (PUBLIC_KEY).
import { Command } from 'commander';
import { openSshTunnel } from './pod-ssh-tunnel.ts';
import { pipeline } from 'node:stream/promises';
import { ApiClient, LOGIN_SHELL } from '../client/index.ts';

export function podSshCommand(execSession: (id: string, argv: string[]) => Promise<number>): Command {
  return new Command('ssh')
    .description(
      "a shell in the pod (or a command: gpufleet pods ssh <id> -- <command…>) through the control plane, no port published; " +
        "--proxy bridges stdin/stdout to the pod's port 22 for ssh: ssh -o ProxyCommand='gpufleet pods ssh %h --proxy' root@<id>",
    )
    .argument('<id>', 'pod id')
    .argument('[command...]', 'a command to run instead of a shell, after --; its words are joined with spaces and run by sh -c, as ssh does')
    .option('--proxy', "bridge stdin and stdout to the pod's port 22 (an SSH server in the image): for ssh's ProxyCommand")
    .action(async (id: string, command: string[], o: { proxy?: boolean }) => {
      if (o.proxy) {
        if (command.length) throw new Error('--proxy takes no command: ssh runs it (ssh -o ProxyCommand=… root@<id> <command>)');
        await proxy(id);
        return;
      }
      process.exitCode = await execSession(id, ['sh', '-c', command.length ? command.join(' ') : LOGIN_SHELL[2]]);
    });
}

/** stdin → the pod's port 22 → stdout, until either side ends */
async function proxy(id: string): Promise<void> {
  const tunnel = await openSshTunnel(new ApiClient(), id);
  const down = pipeline(tunnel, process.stdout);
  const up = pipeline(process.stdin, tunnel).catch(() => undefined);
  try {
    await down;
  } finally {
    process.stdin.destroy();
    tunnel.destroy();
    await up;
  }
}
