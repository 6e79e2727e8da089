// `gpufleet hosts enroll|list|show|drain|undrain|lost|refresh|accept-key|remove|diagnose|clear-gpu` (show, diagnose, clear-gpu: host-gpus.ts)
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { ApiClient, ApiError, responseError } from '../client/index.ts';
import { newTable } from './output.ts';
import { addHostGpuCommands } from './host-gpus.ts';

interface HostRow {
  id: string;
  address: string;
  port: number;
  user: string;
  dataCenterId: string;
  cloud: string;
  status: string;
  statusReason: string | null;
  drained: boolean;
  drain: { deadline: string; total: number; moved: number; stopped: number; remaining: number | null; finishedAt: string | null } | null;
  hostKeySha256: string;
  facts: { gpus: { name: string }[]; cpuCount: number; memoryGb: number; cudaVersion: string | null; dockerVersion: string };
}

/** POST /v2/hosts with progress streamed as NDJSON lines, shown on a spinner. */
async function enroll(ssh: string, o: { identity: string; datacenter?: string; cloud?: string; overlayAddress?: string; json?: boolean }): Promise<void> {
  let privateKey: string;
  try {
    privateKey = await readFile(o.identity, 'utf8');
  } catch (e) {
    // wrong usage, like a bad option value: one line naming the file, exit 2, nothing sent
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    process.stderr.write(`error: --identity ${o.identity}: ${why}\n`);
    process.exitCode = 2;
    return;
  }
  const client = new ApiClient();
  const { default: ora } = await import('ora'); // loaded when enrolling, not at every start
  const spinner = ora({ text: `enrolling ${ssh}`, isEnabled: !o.json && process.stderr.isTTY }).start();
  const res = await fetch(`${client.url}/v2/hosts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.GPUFLEET_API_KEY}`, 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify({ ssh, privateKey, ...(o.datacenter ? { dataCenterId: o.datacenter } : {}), ...(o.cloud ? { cloud: o.cloud } : {}), ...(o.overlayAddress ? { overlayAddress: o.overlayAddress } : {}) }),
  });
  if (!res.ok || !res.body) {
    spinner.fail();
    throw await responseError(res);
  }
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk as Uint8Array, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, nl)) as { progress?: string; host?: HostRow; problem?: { status: number; code: string; detail: string; errors?: string[] } };
      buf = buf.slice(nl + 1);
      if (line.progress) {
        if (spinner.isEnabled) spinner.text = line.progress;
        else if (!o.json) process.stderr.write(`  ${line.progress}\n`);
      }
      if (line.problem) {
        spinner.fail(line.problem.detail);
        throw new ApiError(line.problem.status, line.problem.code, line.problem.detail, line.problem.errors ?? []);
      }
      if (line.host) {
        spinner.succeed(`enrolled ${line.host.id}: ${line.host.facts.gpus.length} GPU(s), ${line.host.facts.cpuCount} CPUs, key ${line.host.hostKeySha256}`);
        if (o.json) console.log(JSON.stringify(line.host, null, 2));
      }
    }
  }
}

export function hostsCommand(): Command {
  const hosts = new Command('hosts').description('fleet hosts (operator admin key)');
  hosts
    .command('enroll <ssh>')
    .description('enroll a host reachable as user@host[:port]')
    .requiredOption('--identity <file>', 'SSH private key file')
    .option('--datacenter <id>', 'data center id', undefined)
    .option('--cloud <tier>', 'SECURE | COMMUNITY')
    .option('--overlay-address <ip>', "the host's IPv4 address for the overlay, when not the default (docs/networking.md)")
    .option('--json', 'print the host as JSON')
    .action(enroll);
  hosts
    .command('overlay-address <id> <ip>')
    .description("set the host's IPv4 address for the overlay (one it has), or `default` (docs/networking.md)")
    .action(async (id: string, ip: string) => {
      const h = await new ApiClient().patch<HostRow & { overlayUnderlay: string | null }>(`/v2/hosts/${encodeURIComponent(id)}`, { overlayAddress: ip === 'default' ? null : ip });
      console.log(`${h.id}: overlay address ${h.overlayUnderlay ?? 'none yet'}`);
    });
  hosts
    .command('list')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const { hosts: rows } = await new ApiClient().get<{ hosts: HostRow[] }>('/v2/hosts');
      if (o.json) return console.log(JSON.stringify(rows, null, 2));
      const t = newTable({ head: ['id', 'address', 'dc', 'cloud', 'status', 'gpus', 'cpus', 'mem GB', 'cuda'] });
      for (const h of rows)
        t.push([h.id, `${h.user}@${h.address}:${h.port}`, h.dataCenterId, h.cloud, h.status, `${h.facts.gpus.length}${h.facts.gpus[0] ? ` × ${h.facts.gpus[0].name}` : ''}`, h.facts.cpuCount, h.facts.memoryGb, h.facts.cudaVersion ?? '-']);
      console.log(t.toString());
    });
  addHostGpuCommands(hosts);
  hosts
    .command('drain <id>')
    .description('stop placing new pods on the host; with --deadline also move its pods off (docs/gpu-health.md, "Acting on it")')
    .option('--deadline <duration>', 'move every movable pod off, stop the rest when this passes: 10m, 1h30m, or seconds')
    .action(async (id: string, o: { deadline?: string }) => {
      const body = o.deadline === undefined ? { drained: true } : { drained: true, deadline: o.deadline };
      const h = await new ApiClient().post<HostRow>(`/v2/hosts/${encodeURIComponent(id)}/drain`, body);
      console.log(h.drain ? `${h.id} ${h.status}: moving ${h.drain.total} pod(s) off before ${h.drain.deadline}` : `${h.id} ${h.status}`);
    });
  hosts
    .command('lost <id>')
    .description('confirm an unreachable host is gone: its pods move, those with a network volume too')
    .action(async (id: string) => {
      const h = await new ApiClient().post<HostRow>(`/v2/hosts/${encodeURIComponent(id)}/lost`);
      console.log(`${h.id} lost (confirmed)`);
    });
  hosts.command('undrain <id>').action(async (id: string) => {
    const h = await new ApiClient().post<HostRow>(`/v2/hosts/${encodeURIComponent(id)}/drain`, { drained: false });
    console.log(`${h.id} ${h.status}`);
  });
  hosts.command('refresh <id>').description('probe again and re-detect GPUs').action(async (id: string) => {
    const h = await new ApiClient().post<HostRow>(`/v2/hosts/${encodeURIComponent(id)}/refresh`);
    console.log(`${h.id}: ${h.facts.gpus.length} GPU(s), CUDA ${h.facts.cudaVersion ?? '-'}`);
  });
  hosts.command('accept-key <id>').description('pin the host key the host now presents').action(async (id: string) => {
    const h = await new ApiClient().post<HostRow>(`/v2/hosts/${encodeURIComponent(id)}/accept-host-key`);
    console.log(`${h.id} now pinned to ${h.hostKeySha256}`);
  });
  hosts
    .command('remove <id>')
    .option('--force', 'remove even while pods live there (they become ERROR)')
    .action(async (id: string, o: { force?: boolean }) => {
      await new ApiClient().delete(`/v2/hosts/${encodeURIComponent(id)}${o.force ? '?force=true' : ''}`);
      console.log(`${id} removed`);
    });
  return hosts;
}
