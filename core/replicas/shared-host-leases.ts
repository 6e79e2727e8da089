// Host leases shared by the replicas of one database (docs/replicas.md): the rules, on the store's
// lease rows (HostLeaseTable, store/pg/replicas/pg-host-leases.ts). Each sync refreshes this
// replica's row and counts the live ones; drops the leases of hosts that are gone and renews the
// rest; over its fair share (hosts ÷ live replicas, rounded up) it gives up the excess that has no
// pass in flight; under it, it takes free or expired leases, a random pick of them (replicas racing
// for them mostly ask for different ones) written in host order (two such writes never wait on each
// other in a cycle); and it renews or takes the fleet leadership (the serverless autoscaler).
import type { HostLeaseRound, HostLeaseTable } from '../../store/index.ts';
import type { HostLeases, LeaseSync } from './host-leases.ts';

export interface SharedHostLeasesOptions {
  /** lease lifetime from its last renewal; default 5000 ms (a dead replica's hosts move within ttl + one sync) */
  ttlMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 5_000;
/** the autoscaler's leadership, renewed with the host leases */
export const FLEET_LEADERSHIP = 'fleet';
/** replica rows older than an hour are deleted once every this many syncs */
const FORGET_EVERY = 1000;

export class SharedHostLeases implements HostLeases {
  readonly shared = true;
  readonly ttlMs: number;
  private syncs = 0;

  constructor(
    private readonly table: HostLeaseTable,
    readonly replicaId: string,
    opts: SharedHostLeasesOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  }

  /** one round on one connection of the database (HostLeaseTable.round) */
  sync(hostIds: readonly string[], busy: ReadonlySet<string>): Promise<LeaseSync> {
    return this.table.round((r) => this.syncOn(r, hostIds, busy));
  }

  private async syncOn(table: HostLeaseRound, hostIds: readonly string[], busy: ReadonlySet<string>): Promise<LeaseSync> {
    const { replicaId: me, ttlMs: ttl } = this;
    // alive: this replica's row, refreshed; the others whose rows are younger than a lease
    const replicas = await table.heartbeat(me, ttl);
    if (++this.syncs % FORGET_EVERY === 1) await table.forgetOldReplicas();
    const fair = Math.ceil(hostIds.length / replicas);
    // leases of hosts that are gone are dropped; the live ones renewed
    const released = await table.dropOthers(me, hostIds);
    let held = await table.renew(me, ttl);
    // over the fair share (a replica joined): give up the excess that has no pass in flight
    if (held.length > fair) {
      const excess = held.filter((h) => !busy.has(h)).slice(0, held.length - fair);
      const dropped = new Set(await table.release(me, excess));
      held = held.filter((h) => !dropped.has(h));
      released.push(...dropped);
    }
    const want = fair - held.length;
    const taken = want > 0 ? await table.take(me, shuffle(await table.free(hostIds)).slice(0, want).sort(), ttl) : [];
    held.push(...taken);
    // the leadership: kept by its holder, taken by anyone once it has run out
    const leader = await table.lead(FLEET_LEADERSHIP, me, ttl);
    return { held, taken, released, leader };
  }

  confirm(hostId: string): Promise<boolean> {
    return this.table.confirm(this.replicaId, hostId, this.ttlMs);
  }

  releaseAll(): Promise<void> {
    return this.table.leave(this.replicaId, FLEET_LEADERSHIP);
  }
}

function shuffle<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
