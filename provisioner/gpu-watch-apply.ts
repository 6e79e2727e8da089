// A watch batch (gpu-watch-reader.ts) applied to the host record as the transaction reads it: each
// observation recorded on its GPU by the table (model/rules/gpu-health.ts), bus ids learned, the
// watch position and counters stored with them (one write: a restart neither replays a line nor
// counts a value twice), the host's conditions brought in line; and the signal events the commit makes.
import type { GpuHealthSignalEvent } from '../core/index.ts';
import { gpuHealth, recordObservation, withHostConditions, type HostGpu, type HostRecord } from '../model/index.ts';
import type { WatchBatch } from './gpu-watch-reader.ts';

export function applyWatchBatch(host: HostRecord, batch: WatchBatch, at: string): { host: HostRecord; signals: GpuHealthSignalEvent[] } {
  const signals: GpuHealthSignalEvent[] = [];
  const gpus: HostGpu[] = host.facts.gpus.map((g) => (batch.busIds[g.uuid] ? { ...g, busId: batch.busIds[g.uuid]! } : g));
  for (const { uuid, observation } of batch.observations) {
    const i = gpus.findIndex((g) => g.uuid === uuid);
    if (i < 0) continue;
    const before = gpus[i]!;
    const r = recordObservation(before, observation);
    if (!r.incident) continue;
    gpus[i] = r.gpu;
    signals.push({ hostId: host.id, gpuIndex: before.index, gpuUuid: uuid, health: gpuHealth(r.gpu), previousHealth: gpuHealth(before), incident: r.incident, live: observation.live, at });
  }
  const next = withHostConditions({ ...host, facts: { ...host.facts, gpus }, gpuWatch: batch.watch }, at);
  return { host: next, signals };
}
