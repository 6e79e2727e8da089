// A GPU's health from its incidents (docs/gpu-health.md), pure: what an Xid line or a counter change
// does to a HostGpu, by the table (gpu-health-table.ts). Health is the worst open incident's; a passing
// diagnostic or an operator resolves them; a GPU a probe no longer finds is kept, in FAILURE.
import type { GpuHealth, GpuIncident, HostGpu } from '../records/host.ts';
import { counterRule, xidRule } from './gpu-health-table.ts';

/** incidents kept per GPU: the open ones always, then the newest resolved ones */
export const GPU_INCIDENTS_KEPT = 20;

const RANK: Record<GpuHealth, number> = { HEALTHY: 0, WARNING: 1, FAILURE: 2 };

/** The worse of two healths. */
export const worseHealth = (a: GpuHealth, b: GpuHealth): GpuHealth => (RANK[a] >= RANK[b] ? a : b);

/** A GPU's health: the worst of its open incidents (HEALTHY with none; records from before: HEALTHY). */
export function healthOf(incidents: readonly GpuIncident[] | undefined): GpuHealth {
  let h: GpuHealth = 'HEALTHY';
  for (const i of incidents ?? []) if (i.resolvedAt === null) h = worseHealth(h, i.health);
  return h;
}

/** `gpu.health`, with records from before GPU health read as HEALTHY. */
export const gpuHealth = (g: Pick<HostGpu, 'health'>): GpuHealth => g.health ?? 'HEALTHY';

/** What the watcher saw: an Xid line, or a counter that rose or became set. */
export interface GpuObservation {
  kind: 'xid' | 'counter';
  xid?: number;
  counter?: string;
  /** false for kernel lines from before the watcher first read the host */
  live: boolean;
  /** the kernel line's text, or the counter's old and new values */
  detail: string;
  at: string;
}

/**
 * When the incident became live (what a move bills up to): `liveSince`; for a record from before that
 * field, `firstSeen` when it is live (the best known), else null.
 */
export function incidentLiveSince(i: Pick<GpuIncident, 'live' | 'firstSeen' | 'liveSince'>): string | null {
  if (i.liveSince !== undefined) return i.liveSince;
  return i.live ? i.firstSeen : null;
}

/** The incident an observation opens (or adds to), or null when the table says it changes nothing. */
export function classify(o: GpuObservation): Omit<GpuIncident, 'firstSeen' | 'liveSince' | 'lastSeen' | 'count' | 'resolvedAt'> | null {
  if (o.kind === 'xid') {
    const xid = o.xid ?? -1;
    const rule = xidRule(xid);
    if (rule.health === 'APPLICATION') return null;
    return { kind: 'xid', xid, counter: null, mnemonic: rule.mnemonic, action: rule.action, health: rule.health, live: o.live, message: `Xid ${xid} (${rule.mnemonic}): ${o.detail}` };
  }
  const counter = o.counter ?? '';
  const rule = counterRule(counter);
  if (!rule) return null;
  return { kind: 'counter', xid: null, counter, mnemonic: rule.mnemonic, action: rule.action, health: rule.health, live: o.live, message: `${counter} (${rule.mnemonic}): ${o.detail}` };
}

const sameSubject = (a: Pick<GpuIncident, 'kind' | 'xid' | 'counter'>, b: Pick<GpuIncident, 'kind' | 'xid' | 'counter'>): boolean =>
  a.kind === b.kind && a.xid === b.xid && a.counter === b.counter;

/** Keeps every open incident and the newest resolved ones, GPU_INCIDENTS_KEPT in all at most. */
function trim(list: GpuIncident[]): GpuIncident[] {
  if (list.length <= GPU_INCIDENTS_KEPT) return list;
  const open = list.filter((i) => i.resolvedAt === null).length;
  let dropResolved = list.length - Math.max(GPU_INCIDENTS_KEPT, open);
  return list.filter((i) => !(i.resolvedAt !== null && dropResolved-- > 0));
}

export interface IncidentChange {
  gpu: HostGpu;
  /** the incident as it is now (new, or the open one it added to); null when the observation changes nothing */
  incident: GpuIncident | null;
  /** true when a new incident opened (not a repeat of an open one) */
  opened: boolean;
}

/** The GPU with the observation recorded: a repeat of an open incident counts up; otherwise a new one. */
export function recordObservation(gpu: HostGpu, o: GpuObservation): IncidentChange {
  const c = classify(o);
  if (!c) return { gpu, incident: null, opened: false };
  const list = [...(gpu.incidents ?? [])];
  const i = list.findIndex((x) => x.resolvedAt === null && sameSubject(x, c));
  let incident: GpuIncident;
  if (i >= 0) {
    const prior = list[i]!;
    // a live repeat of a pre-watch incident makes it live: it is happening now, from this observation
    // on (liveSince); firstSeen stays the watcher's first read of the old line
    const liveSince = incidentLiveSince(prior) ?? (c.live ? o.at : null);
    incident = { ...prior, count: prior.count + 1, lastSeen: o.at, message: c.message, live: prior.live || c.live, liveSince };
    list[i] = incident;
  } else {
    incident = { ...c, firstSeen: o.at, liveSince: c.live ? o.at : null, lastSeen: o.at, count: 1, resolvedAt: null };
    list.push(incident);
  }
  const incidents = trim(list);
  return { gpu: { ...gpu, incidents, health: healthOf(incidents) }, incident, opened: i < 0 };
}

/** The GPU with every open incident resolved at `at` (a passing diagnostic, an operator's clear): HEALTHY. */
export function resolveIncidents(gpu: HostGpu, at: string): HostGpu {
  const incidents = (gpu.incidents ?? []).map((i) => (i.resolvedAt === null ? { ...i, resolvedAt: at } : i));
  return { ...gpu, incidents, health: 'HEALTHY' };
}

/**
 * The GPUs a probe found, with what was known of them kept (health, incidents, bus id, by uuid); a GPU
 * known before that the probe no longer lists stays on the host, in FAILURE (gpu.missing), so a refresh
 * never drops a failed GPU and its pods are not silently left on nothing.
 */
export function mergeProbedGpus(known: readonly HostGpu[], probed: readonly HostGpu[], at: string): HostGpu[] {
  const byUuid = new Map(known.map((g) => [g.uuid, g]));
  const out: HostGpu[] = probed.map((g) => {
    const k = byUuid.get(g.uuid);
    if (!k) return g;
    return { ...g, ...(k.health ? { health: k.health } : {}), ...(k.incidents ? { incidents: k.incidents } : {}), ...(g.busId ?? k.busId ? { busId: g.busId ?? k.busId } : {}) };
  });
  const listed = new Set(probed.map((g) => g.uuid));
  for (const k of known) {
    if (listed.has(k.uuid)) continue;
    out.push(recordObservation(k, { kind: 'counter', counter: 'gpu.missing', live: true, detail: 'the host no longer lists this GPU', at }).gpu);
  }
  return out.sort((a, b) => a.index - b.index);
}
