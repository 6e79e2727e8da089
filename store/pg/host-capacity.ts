// The commit half of plan-then-apply on PostgreSQL (docs/placement.md, docs/postgres.md). The placer
// of each replica plans from its own view and verifies its plan inside the transaction; replicas run
// transactions at once, so the plan is verified again here, at commit, under a per-host advisory lock:
// the transaction that gives a host a placed pod (or more resources to one) reads every placed pod on
// the host, this transaction's included, and applies the placer's own rule (HostLoadRule: fleet's
// hostLoadConflict, the same rule `verifyPlan` applies; wired by core/store-wiring.ts): GPUs held once,
// vCPU, memory, disk. On a conflict it throws HostCapacityConflict: the store announces the host and its
// pods to this replica and runs the transaction again, which plans again (pg-store.ts).
import type pg from 'pg';
import { GpufleetError, type HostRecord, type PodRecord } from '../../model/index.ts';
import type { AnyRecord } from '../base/memory-table.ts';
import { tableOf } from './pg-schema.ts';

/** a statement of the transaction (PgTransaction's, which records the first one that fails) */
type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

type DataRow = { data: string };

/** pg_advisory_xact_lock(key1, key2) namespace of the per-host capacity check (key2: hashtext(host id)) */
const HOST_CAPACITY_LOCK = 0x67660c01;

/** A host's placed pods took more than it has: learn them, place again. Its code is the final answer's. */
export class HostCapacityConflict extends GpufleetError {
  constructor(
    readonly hostId: string,
    readonly constraint: 'gpu-count' | 'cpu-memory' | 'disk',
  ) {
    super('CAPACITY_UNAVAILABLE', `The host this request was placed on has no ${RESOURCE[constraint]} left for it: concurrent requests took it.`, {
      fields: { reason: 'busy', constraint },
    });
  }
}

const RESOURCE = { 'gpu-count': 'free GPUs', 'cpu-memory': 'vCPU or memory', disk: 'disk' } as const;

/** The placer's rule, as the store applies it at commit: what a placed pod holds, and whether a host's placed pods fit it. */
export interface HostLoadRule {
  /** what the pod holds on its host, or null when it is not placed */
  holds(pod: PodRecord): { hostId: string; vcpu: number; memoryGb: number; diskGb: number } | null;
  /** why the placed pods do not fit the host (a GPU held twice, too much vCPU/memory or disk), or null when they fit */
  conflict(host: HostRecord, pods: readonly PodRecord[]): { constraint: 'gpu-count' | 'cpu-memory' | 'disk' } | null;
}

export const isCapacityConflict = (e: unknown): e is HostCapacityConflict => e instanceof HostCapacityConflict;

/**
 * The hosts this transaction's pod writes add to: a pod placed on a host it was not placed on before
 * (created, started, moved; or written without being read here), or given more vCPU, memory or disk
 * there. Releases, shrinks and writes that leave the placement as it was add nothing (no check).
 */
export function hostsGainingLoad(rule: HostLoadRule, pods: ReadonlyMap<string, AnyRecord | null>, before: (id: string) => AnyRecord | null | undefined): string[] {
  const hosts = new Set<string>();
  for (const [id, v] of pods) {
    const now = v ? rule.holds(v as unknown as PodRecord) : null;
    if (!now) continue;
    const was = before(id);
    const prev = was ? rule.holds(was as unknown as PodRecord) : null;
    if (prev && prev.hostId === now.hostId && now.vcpu <= prev.vcpu && now.memoryGb <= prev.memoryGb && now.diskGb <= prev.diskGb) continue;
    hosts.add(now.hostId);
  }
  return [...hosts].sort();
}

/**
 * Inside the transaction, after its rows are written: each host (in id order, so two transactions
 * never wait on each other crosswise) locked, then the plan verified on it: its placed pods against its capacity.
 */
export async function checkHostCapacity(rule: HostLoadRule, q: Query, hostIds: readonly string[]): Promise<void> {
  if (hostIds.length === 0) return;
  for (const id of hostIds) await q('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [HOST_CAPACITY_LOCK, id]);
  const hosts = await q(`SELECT data::text AS data FROM ${tableOf('hosts')} WHERE id = ANY($1::text[])`, [hostIds]);
  const pods = await q(
    `SELECT (data - '$sealed')::text AS data FROM ${tableOf('pods')} WHERE data -> 'hostId' = ANY($1::jsonb[]) AND data -> 'allocated' = 'true'::jsonb`,
    [hostIds.map((id) => JSON.stringify(id))],
  );
  const placed = (pods.rows as DataRow[]).map((r) => JSON.parse(r.data) as PodRecord);
  for (const row of hosts.rows as DataRow[]) {
    const host = JSON.parse(row.data) as HostRecord;
    const conflict = rule.conflict(host, placed);
    if (conflict) throw new HostCapacityConflict(host.id, conflict.constraint);
  }
}
