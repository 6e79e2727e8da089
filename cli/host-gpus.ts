// `gpufleet hosts show` (the host, every GPU's health and open incidents, its conditions),
// `gpufleet hosts diagnose <id> [--gpu <uuid>] [--level 2]` and `gpufleet hosts clear-gpu <id> --gpu <uuid>`
// (docs/gpu-health.md, "What the operator sees and does").
import type { Command } from 'commander';
import { ApiClient } from '../client/index.ts';
import { newTable } from './output.ts';

interface Incident {
  kind: 'xid' | 'counter';
  xid: number | null;
  counter: string | null;
  mnemonic: string;
  action: string;
  health: string;
  live: boolean;
  firstSeen: string;
  liveSince: string | null;
  lastSeen: string;
  count: number;
  resolvedAt: string | null;
}

interface GpuView {
  index: number;
  uuid: string;
  name: string;
  health: string;
  busId: string | null;
  incidents: Incident[];
  diagnostic: { at: string; passed: boolean; method: string; level: number; summary: string; by: string } | null;
}

interface HostView {
  id: string;
  address: string;
  port: number;
  user: string;
  dataCenterId: string;
  status: string;
  statusReason: string | null;
  facts: { gpus: GpuView[] };
  conditions: { type: string; status: string; reason: string; message: string }[];
}

interface DiagnoseView {
  method: string;
  level: number;
  passed: boolean;
  gpus: { index: number; uuid: string; passed: boolean; summary: string; health: string }[];
}

const what = (i: Incident) => (i.kind === 'xid' ? `Xid ${i.xid} ${i.mnemonic}` : `${i.counter} ${i.mnemonic}`);

function printHost(h: HostView): void {
  console.log(`${h.id}  ${h.user}@${h.address}:${h.port}  ${h.dataCenterId}  ${h.status}${h.statusReason ? ` (${h.statusReason})` : ''}`);
  if (h.facts.gpus.length > 0) {
    const t = newTable({ head: ['gpu', 'uuid', 'bus', 'health', 'open incidents', 'last diagnostic'] });
    for (const g of h.facts.gpus) {
      const open = g.incidents.filter((i) => i.resolvedAt === null);
      const incidents = open.map((i) => `${what(i)} → ${i.action} ×${i.count}, last ${i.lastSeen}${i.live ? '' : ' (before watch)'}`).join('\n') || '-';
      const diag = g.diagnostic ? `${g.diagnostic.passed ? 'passed' : 'FAILED'} ${g.diagnostic.method} ${g.diagnostic.at} by ${g.diagnostic.by}` : '-';
      t.push([`${g.index} ${g.name}`, g.uuid, g.busId ?? '-', g.health, incidents, diag]);
    }
    console.log(t.toString());
  }
  for (const c of h.conditions) console.log(`${c.type}=${c.status} ${c.reason}: ${c.message}`);
}

export function addHostGpuCommands(hosts: Command): void {
  hosts
    .command('show <id>')
    .description("a host: every GPU's health and open incidents, and its conditions")
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const h = await new ApiClient().get<HostView>(`/v2/hosts/${encodeURIComponent(id)}`);
      if (o.json) return console.log(JSON.stringify(h, null, 2));
      printHost(h);
    });
  hosts
    .command('diagnose <id>')
    .description('run a GPU diagnostic (dcgmi diag -r 1 where DCGM is installed, else the driver check); a pass returns the GPU to service')
    .option('--gpu <uuid>', 'only this GPU')
    .option('--level <n>', 'dcgmi diag run level: 1 (default) or 2', '1')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { gpu?: string; level: string; json?: boolean }) => {
      const level = Number(o.level);
      if (level !== 1 && level !== 2) {
        process.stderr.write(`error: --level ${o.level}: must be 1 or 2\n`);
        process.exitCode = 2;
        return;
      }
      const r = await new ApiClient().post<DiagnoseView>(`/v2/hosts/${encodeURIComponent(id)}/diagnose`, { ...(o.gpu ? { gpu: o.gpu } : {}), level });
      if (o.json) return console.log(JSON.stringify(r, null, 2));
      console.log(`${r.method}${r.level ? ` level ${r.level}` : ''}: ${r.passed ? 'passed' : 'FAILED'}`);
      for (const g of r.gpus) console.log(`  GPU ${g.index} ${g.uuid}: ${g.passed ? 'passed' : 'FAILED'}, now ${g.health}: ${g.summary}`);
      if (!r.passed) process.exitCode = 1;
    });
  hosts
    .command('clear-gpu <id>')
    .description('return a GPU to service by hand (recorded in the events with your key)')
    .requiredOption('--gpu <uuid>', 'the GPU')
    .option('--reason <text>', 'why')
    .action(async (id: string, o: { gpu: string; reason?: string }) => {
      const h = await new ApiClient().post<HostView>(`/v2/hosts/${encodeURIComponent(id)}/gpus/${encodeURIComponent(o.gpu)}/clear`, o.reason ? { reason: o.reason } : {});
      const g = h.facts.gpus.find((x) => x.uuid === o.gpu);
      console.log(`${h.id} GPU ${g?.index ?? '?'} ${o.gpu}: ${g?.health ?? '?'}`);
    });
}
