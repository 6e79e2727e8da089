// Which hosts this control-plane replica reconciles (docs/replicas.md). With several replicas on one
// database every host is reconciled by exactly one of them at a time: a lease per host (holder,
// expiry) that the holder renews and any replica takes once it has expired, so a dead replica's hosts
// are taken over within a few seconds. With the embedded store there is one process: it holds every
// host, always, and nothing is asked of anyone. The shared leases are the store's (store/pg/replicas).
import type { HostLeases, LeaseSync } from '../../store/index.ts';

export type { HostLeases, LeaseSync };

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
