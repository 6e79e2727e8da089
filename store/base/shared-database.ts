// What replicas of one control plane share through their database (docs/replicas.md), as ports the
// store implements (store/pg/replicas/, store/pg/jobs/): host leases and the leadership, named
// leaderships of loops that run once in all, rate-limit windows, and the job queue's rows. core/
// holds the rules that use them; the embedded store has none of these (one process holds it all).
import type { JobRows } from './job-rows.ts';

export interface LeaseSync {
  /** the hosts this replica holds after the sync */
  held: string[];
  /** those among them it did not hold before (taken over, or new): reconcile them at once */
  taken: string[];
  /** those it gave up (over its fair share, or hosts that no longer exist) */
  released: string[];
  /** this replica runs the loops that must run once in all (the serverless autoscaler) */
  leader: boolean;
}

export interface HostLeases {
  /** this process among the replicas: random per start, logged */
  readonly replicaId: string;
  /** false: one process holds every host (the embedded store); sync and confirm are not needed */
  readonly shared: boolean;
  /** how long a lease lasts from its last renewal, in ms */
  readonly ttlMs: number;
  /**
   * Renews this replica's leases among `hostIds`, gives up what it holds beyond its fair share
   * (hosts ÷ live replicas, rounded up) except the `busy` ones (a pass in flight), and takes free or
   * expired leases up to that share. Also renews or takes the leadership (one replica of all holds it).
   */
  sync(hostIds: readonly string[], busy: ReadonlySet<string>): Promise<LeaseSync>;
  /** One round trip: this replica still holds `hostId` (and the lease is renewed). */
  confirm(hostId: string): Promise<boolean>;
  /** Gives up every lease of this replica (a clean stop: the others take its hosts at their next sync). */
  releaseAll(): Promise<void>;
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
  hostLeases(replicaId: string, opts?: { ttlMs?: number }): HostLeases;
  leadership(replicaId: string, name: string, ttlMs: number): Leadership;
  rateWindows(): RateWindows;
  jobRows(): JobRows;
}
