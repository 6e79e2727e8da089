// Returning a GPU to service (docs/gpu-health.md): a diagnostic run on the host (fleet's
// diagnosticScript: dcgmi diag where DCGM is installed, else the driver check) whose pass closes the
// GPU's open incidents (HEALTHY) and whose failure keeps it out (a diagnostic.failed incident:
// FAILURE); or an operator's clear by hand. Both are recorded on the GPU (`diagnostic`, with who), make
// host.gpu_* events through the commit, and are told to the GPU health signal.
import { diagnosticOutcome, diagnosticScript, type GpuVerdict, type SshPool } from '../../fleet/index.ts';
import { GpufleetError, gpuHealth, recordObservation, resolveIncidents, withHostConditions } from '../../model/index.ts';
import type { GpuDiagnostic, HostGpu, HostRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { GpuHealthSignal, GpuHealthSignalEvent } from './gpu-health-signal.ts';
import type { HostService } from './host-service.ts';

export interface DiagnoseInput {
  /** one GPU (its uuid); all of the host's when absent */
  gpu?: string;
  /** dcgmi's run level: 1 (quick, the default) or 2 (medium, about two minutes) */
  level?: 1 | 2;
}

export interface DiagnoseResult {
  hostId: string;
  method: 'dcgmi' | 'driver-check';
  level: number;
  passed: boolean;
  gpus: { index: number; uuid: string; passed: boolean; summary: string; health: string }[];
  host: HostRecord;
}

/** how long the diagnostic command may take on the host: dcgmi level 1 is seconds, level 2 about two minutes */
const DIAG_TIMEOUT_MS = { 1: 5 * 60_000, 2: 15 * 60_000 } as const;

export class GpuDiagnostics {
  constructor(
    private readonly store: Store,
    private readonly pool: SshPool,
    private readonly hosts: HostService,
    private readonly signal: GpuHealthSignal,
  ) {}

  async diagnose(hostId: string, input: DiagnoseInput, actor: string): Promise<DiagnoseResult> {
    const host = await this.hosts.get(hostId);
    const level = input.level ?? 1;
    const gpus = input.gpu === undefined ? host.facts.gpus : [gpuOf(host, input.gpu)];
    if (gpus.length === 0) throw new GpufleetError('CONFLICT', `Host ${hostId} has no GPU to diagnose.`);
    const res = await this.pool.exec(this.hosts.target(host), diagnosticScript({ level, gpuIndexes: input.gpu === undefined ? [] : gpus.map((g) => g.index) }), {
      allowFailure: true,
      timeoutMs: DIAG_TIMEOUT_MS[level],
    });
    const outcome = diagnosticOutcome(res.stdout, gpus);
    const at = new Date().toISOString();
    const next = await this.record(hostId, actor, at, (g) => {
      const v: GpuVerdict | undefined = outcome.verdicts.get(g.uuid);
      if (!v) return null;
      const diagnostic: GpuDiagnostic = { at, passed: v.passed, method: outcome.method, level: outcome.method === 'dcgmi' ? level : 0, summary: v.summary, by: actor };
      if (v.passed) return { ...resolveIncidents(g, at), diagnostic };
      return { ...recordObservation(g, { kind: 'counter', counter: 'diagnostic.failed', live: true, detail: v.summary, at }).gpu, diagnostic };
    });
    const judged = next.facts.gpus.filter((g) => outcome.verdicts.has(g.uuid));
    return {
      hostId,
      method: outcome.method,
      level: outcome.method === 'dcgmi' ? level : 0,
      passed: judged.every((g) => g.diagnostic?.passed === true),
      gpus: judged.map((g) => ({ index: g.index, uuid: g.uuid, passed: g.diagnostic?.passed === true, summary: g.diagnostic?.summary ?? '', health: gpuHealth(g) })),
      host: next,
    };
  }

  /** An operator returns the GPU to service by hand: its open incidents are closed, recorded with who and why. */
  async clear(hostId: string, gpu: string, actor: string, reason?: string): Promise<HostRecord> {
    gpuOf(await this.hosts.get(hostId), gpu);
    const at = new Date().toISOString();
    return this.record(hostId, actor, at, (g) =>
      g.uuid !== gpu ? null : { ...resolveIncidents(g, at), diagnostic: { at, passed: true, method: 'cleared', level: 0, summary: `cleared by hand${reason ? `: ${reason}` : ''}`, by: actor } },
    );
  }

  /** One transaction: each GPU `change` answers for is replaced; the signal hears each health change. */
  private async record(hostId: string, actor: string, at: string, change: (g: HostGpu) => HostGpu | null): Promise<HostRecord> {
    const signals: GpuHealthSignalEvent[] = [];
    const next = await this.store.transact(async (tx) => {
      const h = await tx.get('hosts', hostId);
      if (!h) throw new GpufleetError('NOT_FOUND', `Host ${hostId} is not enrolled.`);
      const gpus = h.facts.gpus.map((g) => {
        const n = change(g);
        if (!n) return g;
        const incident = (n.incidents ?? []).find((i) => i.resolvedAt === null && i.counter === 'diagnostic.failed' && i.lastSeen === at) ?? null;
        if (gpuHealth(n) !== gpuHealth(g) || incident)
          signals.push({ hostId, gpuIndex: g.index, gpuUuid: g.uuid, health: gpuHealth(n), previousHealth: gpuHealth(g), incident, live: true, at });
        return n;
      });
      const rec = withHostConditions({ ...h, facts: { ...h.facts, gpus } }, at);
      tx.put('hosts', rec);
      return rec;
    }, { actor });
    for (const e of signals) this.signal.publish(e);
    return next;
  }
}

/** The host's GPU with that uuid; 404 for any other (the uuid was checked by the request's schema). */
function gpuOf(host: HostRecord, uuid: string): HostGpu {
  const g = host.facts.gpus.find((x) => x.uuid === uuid);
  if (!g) throw new GpufleetError('NOT_FOUND', `Host ${host.id} has no GPU ${uuid}.`);
  return g;
}
