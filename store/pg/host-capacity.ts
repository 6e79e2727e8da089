// "No host is given more vCPU, memory or disk than it has" across replicas (docs/postgres.md). The
// placer of each replica proposes from its own view; the transaction that gives a host a placed pod
// (or more resources to one) re-checks the host at commit, from the database: under a per-host
// advisory lock it reads every placed pod on the host, this transaction's included, and applies the
// scheduler's own rule, which the layer that owns it gives the store (HostLoadRule: fleet/host-load.ts,
// wired by core/store-wiring.ts). On excess it throws HostCapacityConflict: the store announces the host
// and its pods to this replica and runs the transaction again (pg-store.ts).
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
    readonly constraint: 'cpu-memory' | 'disk',
  ) {
    super('CAPACITY_UNAVAILABLE', `The host this request was placed on has no ${constraint === 'disk' ? 'disk' : 'vCPU or memory'} left for it: concurrent requests took it.`, {
      fields: { reason: 'busy', constraint },
    });
  }
}

/** The placer's rule, as the store applies it at commit: what a placed pod holds, and whether a host's placed pods fit it. */
export interface HostLoadRule {
  /** what the pod holds on its host, or null when it is not placed */
  holds(pod: PodRecord): { hostId: string; vcpu: number; memoryGb: number; diskGb: number } | null;
  /** the resource the placed pods take more of than the host has, or null when they fit */
  overcommit(host: HostRecord, pods: readonly PodRecord[]): 'cpu-memory' | 'disk' | null;
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
 * never wait on each other crosswise) locked, then its placed pods summed against its capacity.
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
    const excess = rule.overcommit(host, placed);
    if (excess) throw new HostCapacityConflict(host.id, excess);
  }
}
