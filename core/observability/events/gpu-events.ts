// GPU health events (docs/gpu-health.md, docs/events.md) from the hosts' commits, like status events:
// `host.gpu_failure` / `host.gpu_warning` / `host.gpu_healthy` when a GPU's health changes,
// `host.gpu_incident` for a new incident that leaves its health as it was, `host.gpu_diagnosed` for each
// diagnostic or clear. `status`/`previousStatus` are the GPU's health; `reason` names the GPU and what
// happened; `actor` is the transaction's (provisioner for the watcher, the operator's key for a diagnose
// or a clear).
import { actorFields, gpuHealth, type GpuHealth, type HostGpu, type HostRecord } from '../../../model/index.ts';
import type { EventLog } from './event-log.ts';

interface GpuSeen {
  health: GpuHealth;
  /** open incidents by subject, and their count */
  open: Map<string, number>;
  diagnosedAt: string | null;
}

const subject = (i: { kind: string; xid: number | null; counter: string | null }): string => `${i.kind}:${i.xid ?? i.counter}`;

function seenOf(g: HostGpu): GpuSeen {
  const open = new Map<string, number>();
  for (const i of g.incidents ?? []) if (i.resolvedAt === null) open.set(subject(i), i.count);
  return { health: gpuHealth(g), open, diagnosedAt: g.diagnostic?.at ?? null };
}

export class GpuEvents {
  private readonly seen = new Map<string, Map<string, GpuSeen>>();

  constructor(private readonly log: EventLog) {}

  /** What the hosts show now, so that only later changes become events. */
  know(host: HostRecord): void {
    this.seen.set(host.id, new Map(host.facts.gpus.map((g) => [g.uuid, seenOf(g)])));
  }

  forget(hostId: string): void {
    this.seen.delete(hostId);
  }

  changed(host: HostRecord, actor: string): void {
    const before = this.seen.get(host.id);
    this.know(host);
    if (!before) return; // a new host: its GPUs' first appearance is the host's event
    for (const g of host.facts.gpus) {
      const was = before.get(g.uuid) ?? { health: 'HEALTHY' as GpuHealth, open: new Map(), diagnosedAt: null };
      const now = seenOf(g);
      const append = (type: string, reason: string) =>
        this.log.append({ resourceType: 'host', resourceId: host.id, accountId: null, type, status: now.health, previousStatus: was.health, reason: `GPU ${g.index} (${g.uuid}): ${reason}`, ...actorFields(actor) });
      const fresh = (g.incidents ?? []).filter((i) => i.resolvedAt === null && !was.open.has(subject(i)));
      if (now.diagnosedAt !== was.diagnosedAt && g.diagnostic) append('host.gpu_diagnosed', `${g.diagnostic.method}${g.diagnostic.level ? ` level ${g.diagnostic.level}` : ''} ${g.diagnostic.passed ? 'passed' : 'failed'}: ${g.diagnostic.summary}`);
      if (now.health !== was.health) {
        const cause = fresh.at(-1)?.message ?? (now.health === 'HEALTHY' ? 'returned to service' : 'health changed');
        append(`host.gpu_${now.health.toLowerCase()}`, cause);
      } else for (const i of fresh) append('host.gpu_incident', i.message);
    }
  }
}
