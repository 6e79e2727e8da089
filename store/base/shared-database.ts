// What replicas of one control plane share through their database (docs/replicas.md), as ports the
// store implements (store/pg/replicas/, store/pg/jobs/): host leases' rows and the leadership, named
// leaderships of loops that run once in all, rate-limit windows, and the job queue's rows. core/
// holds the rules that use them; the embedded store has none of these (one process holds it all).
import type { JobRows } from './job-rows.ts';

/**
 * The host leases' rows (gf_replicas, gf_host_leases, the `fleet` leadership) as one sync round sees
 * them: each call is one atomic statement on the database's clock. Which hosts to renew, shed and
 * take is core's (core/replicas/shared-host-leases.ts).
 */
export interface HostLeaseRound {
  /** refreshes `replicaId`'s row; answers the live replicas, itself included (others seen within `aliveMs`) */
  heartbeat(replicaId: string, aliveMs: number): Promise<number>;
  /** deletes replica rows not seen for an hour */
  forgetOldReplicas(): Promise<void>;
  /** drops `replicaId`'s leases of hosts not among `hostIds`; answers them */
  dropOthers(replicaId: string, hostIds: readonly string[]): Promise<string[]>;
  /** renews `replicaId`'s unexpired leases for `ttlMs`; answers their hosts */
  renew(replicaId: string, ttlMs: number): Promise<string[]>;
  /** gives up `replicaId`'s leases of `hostIds`; answers those it had */
  release(replicaId: string, hostIds: readonly string[]): Promise<string[]>;
  /** those of `hostIds` that nobody holds (no lease, or one run out) */
  free(hostIds: readonly string[]): Promise<string[]>;
  /** takes the leases of `hostIds` (in that order) that are still free when written; answers those taken */
  take(replicaId: string, hostIds: readonly string[], ttlMs: number): Promise<string[]>;
  /** renews the leadership `name` for `holder`, or takes it if it is free or has run out; true when `holder` has it */
  lead(name: string, holder: string, ttlMs: number): Promise<boolean>;
}

/** The host leases' rows: a sync round on one connection, the create path's check, a clean stop. */
export interface HostLeaseTable {
  /**
   * runs `fn`'s statements on one connection (one checkout of the pool per round, not one per
   * statement); each statement still commits by itself, so a round holds no row lock across
   * statements and two replicas' rounds never wait on each other in a cycle
   */
  round<T>(fn: (r: HostLeaseRound) => Promise<T>): Promise<T>;
  /** one round trip: `replicaId` still holds `hostId`, and the lease is renewed */
  confirm(replicaId: string, hostId: string, ttlMs: number): Promise<boolean>;
  /** every lease, the leadership `name` and the replica row of `replicaId`, given up (a clean stop) */
  leave(replicaId: string, leadership: string): Promise<void>;
}

/** one named leadership of a loop that runs on one replica at a time */
export interface Leadership {
  readonly replicaId: string;
  readonly name: string;
  readonly ttlMs: number;
  /** whether this replica runs the round: renews the lead for ttlMs, or takes it if it ran out */
  lead(): Promise<boolean>;
  /** a clean stop: the next replica to ask leads at once */
  release(): Promise<void>;
}

export interface SharedWindowState {
  /** the database's clock, in epoch seconds */
  now: number;
  /** start of each window, epoch seconds */
  starts: number[];
  /** units used in each window after this call */
  used: number[];
  /** the units were counted (every window had room) */
  taken: boolean;
}

export interface RateWindows {
  /** counts `units` for `subject` in windows of `seconds` with `quotas`, unless one has fewer left */
  take(subject: string, seconds: readonly number[], quotas: readonly number[], units: number): Promise<SharedWindowState>;
  /** gives `units` back in the windows that still start at `starts` */
  refund(subject: string, starts: readonly number[], units: number): Promise<void>;
}

export interface SharedDatabase {
  hostLeaseTable(): HostLeaseTable;
  leadership(replicaId: string, name: string, ttlMs: number): Leadership;
  rateWindows(): RateWindows;
  jobRows(): JobRows;
}
