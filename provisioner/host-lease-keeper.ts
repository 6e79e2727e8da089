// This replica's side of the per-host reconcile leases (core HostLeases, docs/replicas.md): a loop
// that renews the leases it holds, gives up its excess when replicas join and takes expired ones when
// a replica dies, and the answer the reconcile loop asks before every pass: do I hold this host now?
// A lease counts as held until a local deadline a margin short of its expiry, measured from when the
// renewal was sent, so a replica that stalls or loses the database stops before anyone can take over.
// With the embedded store (one process) every host is held and nothing runs here.
import type { Logger } from 'pino';
import type { HostLeases } from '../core/index.ts';
import type { Store } from '../store/index.ts';
import { GpufleetError } from '../model/index.ts';

/** how often the host list is read whole (commits keep it between; a missed notification heals here) */
const FULL_READ_MS = 30_000;

export interface HostLeaseKeeperOptions {
  /** between syncs; default a quarter of the lease's lifetime (at most 1500 ms) */
  syncMs?: number;
  logger?: Logger;
  /** told of hosts this replica just took: reconcile them at once */
  onTaken: (hostIds: string[]) => void;
  /** hosts with a pass in flight (never given up while it runs) */
  busy: () => ReadonlySet<string>;
  /** told when this replica becomes the one that runs the once-in-all loops (true) or stops being it */
  onLeader?: (leader: boolean) => void;
}

export class HostLeaseKeeper {
  /** host id → performance.now() until which it is held */
  private readonly until = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private syncing: Promise<void> | null = null;
  private readonly margin: number;
  private readonly syncMs: number;
  private failing = false;
  /** performance.now() until which this replica leads */
  private leadUntil = 0;
  private leading = false;
  private leadTimer: NodeJS.Timeout | null = null;
  /** the hosts there are, kept from commits between full reads (every FULL_READ_MS) */
  private hostIds: Set<string> | null = null;
  private hostsReadAt = 0;
  /** host changes heard while a full read is in flight: applied on top of what it returns */
  private heardDuringRead: { id: string; deleted: boolean }[] | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly leases: HostLeases,
    private readonly store: Store,
    private readonly opts: HostLeaseKeeperOptions,
  ) {
    this.syncMs = opts.syncMs ?? Math.min(1500, leases.ttlMs / 4);
    this.margin = Math.min(1000, leases.ttlMs / 5);
  }

  get replicaId(): string {
    return this.leases.replicaId;
  }

  /** Holds `hostId` now (always, with the embedded store). */
  holds(hostId: string): boolean {
    if (!this.leases.shared) return true;
    return (this.until.get(hostId) ?? 0) > performance.now();
  }

  /** This replica runs the loops that must run once in all (always, with the embedded store). */
  isLeader(): boolean {
    return !this.leases.shared || this.leadUntil > performance.now();
  }

  private setLeading(now: boolean): void {
    if (now === this.leading) return;
    this.leading = now;
    this.opts.logger?.info({ replicaId: this.leases.replicaId, leader: now }, now ? 'this replica now runs the autoscaler' : 'this replica no longer runs the autoscaler');
    this.opts.onLeader?.(now);
  }

  /** the hosts held now */
  held(): string[] {
    const now = performance.now();
    return [...this.until].filter(([, t]) => t > now).map(([h]) => h);
  }

  /**
   * Right before a command that creates something on the host (docker run, docker start): one round
   * trip that this replica still holds the lease, renewing it. Throws HOST_LEASE_LOST otherwise, which
   * ends the pass. The container's fixed name (`gpufleet-<pod id>`) stops a second create on the host
   * itself, should a run of a replica that lost its lease still be in flight.
   */
  async confirm(hostId: string): Promise<void> {
    if (!this.leases.shared) return;
    const sent = performance.now();
    const ok = await this.leases.confirm(hostId).catch(() => false);
    if (ok) {
      this.until.set(hostId, sent + this.leases.ttlMs - this.margin);
      return;
    }
    this.until.delete(hostId);
    throw new GpufleetError('HOST_LEASE_LOST', `replica ${this.leases.replicaId} no longer holds the reconcile lease of host ${hostId}`, {
      fields: { hostId, replicaId: this.leases.replicaId },
    });
  }

  start(): void {
    if (!this.leases.shared) return;
    // hosts enrolled or removed anywhere reach every replica as commits: no full read each sync
    this.unsubscribe = this.store.onCommit((changes) => {
      for (const c of changes) {
        if (c.collection !== 'hosts') continue;
        this.heardDuringRead?.push({ id: c.id, deleted: c.deleted });
        if (c.deleted) this.hostIds?.delete(c.id);
        else this.hostIds?.add(c.id);
      }
    });
    this.opts.logger?.info({ replicaId: this.leases.replicaId, leaseTtlMs: this.leases.ttlMs }, 'reconcile leases: this replica takes its share of the hosts');
    const tick = () => {
      if (this.stopped) return;
      this.syncing = this.sync().finally(() => {
        this.syncing = null;
        if (!this.stopped) this.timer = setTimeout(tick, this.syncMs);
      });
    };
    tick();
  }

  async sync(): Promise<void> {
    const sent = performance.now();
    try {
      if (!this.hostIds || performance.now() - this.hostsReadAt > FULL_READ_MS) {
        this.hostsReadAt = performance.now();
        this.heardDuringRead = [];
        try {
          const ids = new Set((await this.store.list('hosts')).map((h) => h.id));
          for (const h of this.heardDuringRead) {
            if (h.deleted) ids.delete(h.id);
            else ids.add(h.id);
          }
          this.hostIds = ids;
        } finally {
          this.heardDuringRead = null;
        }
      }
      const r = await this.leases.sync([...this.hostIds], this.opts.busy());
      const deadline = sent + this.leases.ttlMs - this.margin;
      const heldBefore = new Set(this.held());
      this.until.clear();
      for (const h of r.held) this.until.set(h, deadline);
      this.leadUntil = r.leader ? deadline : 0;
      this.setLeading(r.leader);
      // leadership ends at its deadline unless a sync renews it first
      if (this.leadTimer) clearTimeout(this.leadTimer);
      if (r.leader) {
        this.leadTimer = setTimeout(() => !this.isLeader() && this.setLeading(false), Math.max(0, deadline - performance.now()) + 1);
        this.leadTimer.unref();
      }
      const taken = r.held.filter((h) => !heldBefore.has(h));
      if (this.failing) this.opts.logger?.info({ replicaId: this.leases.replicaId }, 'reconcile leases: renewing again');
      this.failing = false;
      if (r.released.length > 0) this.opts.logger?.info({ replicaId: this.leases.replicaId, hosts: r.released.length }, 'reconcile leases: gave up hosts');
      if (taken.length > 0) {
        this.opts.logger?.info({ replicaId: this.leases.replicaId, hosts: taken.length, held: r.held.length }, 'reconcile leases: took hosts');
        this.opts.onTaken(taken);
      }
    } catch (err) {
      // the leases held run out at their deadlines: this replica stops reconciling those hosts
      if (!this.failing) this.opts.logger?.warn({ err, replicaId: this.leases.replicaId }, 'reconcile leases: renewal failed');
      this.failing = true;
    }
  }

  /** Stops renewing and gives every lease up, so the other replicas take the hosts at their next sync. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.syncing;
    this.until.clear();
    this.leadUntil = 0;
    if (this.leadTimer) clearTimeout(this.leadTimer);
    if (this.leases.shared) await this.leases.releaseAll().catch(() => undefined);
  }
}
