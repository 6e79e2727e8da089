// Which hosts this control-plane replica reconciles (docs/replicas.md). With several replicas on one
// database every host is reconciled by exactly one of them at a time: a lease per host (holder,
// expiry) that the holder renews and any replica takes once it has expired, so a dead replica's hosts
// are taken over within a few seconds. With the embedded store there is one process: it holds every
// host, always, and nothing is asked of anyone. The shared leases: shared-host-leases.ts, on the
// store's rows (store/pg/replicas).
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


/** The embedded store's: this process holds every host. */
export class SoleHostLeases implements HostLeases {
  readonly shared = false;
  readonly ttlMs = Number.POSITIVE_INFINITY;
  private known = new Set<string>();

  constructor(readonly replicaId: string) {}

  async sync(hostIds: readonly string[]): Promise<LeaseSync> {
    const taken = hostIds.filter((h) => !this.known.has(h));
    const now = new Set(hostIds);
    const released = [...this.known].filter((h) => !now.has(h));
    this.known = now;
    return { held: [...hostIds], taken, released, leader: true };
  }

  async confirm(): Promise<boolean> {
    return true;
  }

  async releaseAll(): Promise<void> {
    this.known.clear();
  }
}
