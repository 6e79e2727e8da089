// The level-triggered reconcile loop. For each host: observe its labelled containers (one SSH round
// trip), compare with the pods the store places there, and run the commands that close the gap.
// Every pass starts from observation, so a restarted control plane, a command cut mid-way or a host
// that comes back all converge the same way. Commits that change what a pass acts on in a host's
// pods kick that host at once (reconcile-triggers.ts).
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { PodRecord } from '../model/index.ts';
import { isGpufleetError, type ErrorCode } from '../model/index.ts';
import type { ProvisionerObserver, Services } from '../core/index.ts';
import { HostDocker, type ObservedContainer } from './host-docker.ts';
import { PodReconciler } from './pod-reconciler.ts';
import { HostHealth } from './host-health.ts';
import { podStorageDir } from './container-spec.ts';
import { TenantNetworkCollector } from './tenant-network-gc.ts';
import { tenantBridgeName } from './tenant-network.ts';
import { HostLeaseKeeper } from './host-lease-keeper.ts';
import { ReconcileTriggers } from './reconcile-triggers.ts';
import { DEFAULT_PULL_SETTINGS, PullScheduler, type PullSettings } from './pull-scheduler.ts';
import { PodPulls } from './pod-pulls.ts';
import { DEFAULT_BACKOFF, RetryBackoff, type BackoffSettings } from './retry-backoff.ts';
import { retriedLater, retryReason } from './pod-retry.ts';
import { intentOf } from './pod-status.ts';
import { GpuHandover } from './gpu-handover.ts';
import { PodMoves } from './pod-moves.ts';
import { HostDrainer } from './host-drainer.ts';
import { DEFAULT_HOST_LOST_AFTER_MS, LostHosts } from './lost-hosts.ts';
import { GpuFailureMoves } from './gpu-failure-moves.ts';
import { OverlayReconciler } from './overlay/overlay-reconciler.ts';

/** the backoff key of a host's network clean-up, beside its pods' ids */
const NETWORK_CLEANUP = 'network-cleanup';

/**
 * Faults of the host, not of the pod being reconciled: the rest of the pass would fail the same way.
 * A reconcile lease another replica took ends the pass too: the host is that replica's now.
 */
const HOST_LOST: ReadonlySet<ErrorCode> = new Set(['HOST_UNREACHABLE', 'HOST_KEY_MISMATCH', 'HOST_LEASE_LOST']);

export interface ReconcilerOptions {
  intervalMs: number;
  /** heartbeats missed in a row before a host is UNREACHABLE (docs/fleet.md) */
  unreachableAfter?: number;
  /** how often runtime metrics (docker stats, nvidia-smi) are sampled per host */
  metricsIntervalMs?: number;
  logger?: Logger;
  /** told each host pass's duration and each GPU sample (metrics) */
  observer?: ProvisionerObserver;
  /** with several replicas: told when this one starts or stops running the once-in-all loops (HostLeaseKeeper) */
  onLeader?: (leader: boolean) => void;
  /** how long an account's network stays on a host after its last pod there (tenant-network-gc.ts) */
  networkLingerMs?: number;
  /** image pulls per host and account, and when a pull counts as stalled (pull-scheduler.ts) */
  pulls?: Partial<PullSettings>;
  /** waits between the tries of a step that keeps failing on a host (retry-backoff.ts) */
  backoff?: Partial<BackoffSettings>;
  /** how often a host's overlay is checked again when nothing changed (overlay/overlay-reconciler.ts; default 10 s) */
  overlayVerifyMs?: number;
}

export class Reconciler {
  private readonly queue = new PQueue({ concurrency: 16 });
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** per host: its pods (by id) and its network clean-up waiting out a backoff after a failure */
  private readonly retries = new Map<string, RetryBackoff>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  private readonly health: HostHealth;
  private readonly pods: PodReconciler;
  private readonly networks: TenantNetworkCollector;
  /** the accounts' private networks across hosts (docs/networking.md) */
  readonly overlay: OverlayReconciler;
  private readonly triggers = new ReconcileTriggers();
  /** image pulls, beside the passes: a pass never waits for one */
  private readonly pulls: PodPulls;
  /** which hosts this replica reconciles (all of them with the embedded store; docs/replicas.md) */
  readonly leases: HostLeaseKeeper;
  /** pods leaving their hosts (docs/gpu-health.md, "Acting on it"): drains with a deadline, lost hosts */
  private readonly moves: PodMoves;
  private readonly drainer: HostDrainer;
  private readonly lost: LostHosts;
  private readonly gpuFailures: GpuFailureMoves;
  private unsubscribeGpus: (() => void) | null = null;

  constructor(
    private readonly s: Services,
    private readonly opts: ReconcilerOptions,
  ) {
    this.health = new HostHealth(s.store, opts.unreachableAfter ?? 3);
    this.networks = new TenantNetworkCollector(opts.networkLingerMs);
    this.overlay = new OverlayReconciler(s, opts.overlayVerifyMs, opts.logger);
    this.leases = new HostLeaseKeeper(s.hostLeases, s.store, {
      ...(opts.logger ? { logger: opts.logger } : {}),
      onTaken: (hostIds) => {
        for (const h of hostIds) void this.kick(h);
      },
      busy: () => new Set(this.running.keys()),
      ...(opts.onLeader ? { onLeader: opts.onLeader } : {}),
    });
    const confirm = (hostId: string) => this.leases.confirm(hostId);
    const scheduler = new PullScheduler({ ...DEFAULT_PULL_SETTINGS, ...opts.pulls }, (hostId) => this.leases.holds(hostId));
    this.pulls = new PodPulls(s, scheduler, {
      kick: (hostId) => void this.kick(hostId),
      beforeCreate: confirm,
      fail: async (podId, intent, reason, conditions) => void (await this.pods.fail({ id: podId }, intent, reason, conditions)),
      log: opts.logger,
    });
    this.pods = new PodReconciler(s, opts.metricsIntervalMs ?? 10_000, opts.observer, opts.logger, confirm, this.pulls);
    this.moves = new PodMoves(s, opts.logger);
    this.drainer = new HostDrainer(s, this.moves, s.config.drainParallel ?? 1);
    this.lost = new LostHosts(s, this.moves, s.config.hostLostAfterMs ?? DEFAULT_HOST_LOST_AFTER_MS);
    this.gpuFailures = new GpuFailureMoves(this.moves);
  }

  /** started and not stopped: what /readyz reports for the provisioner */
  get isRunning(): boolean {
    return this.unsubscribe !== null && !this.stopped;
  }

  start(): void {
    this.unsubscribe = this.s.store.onCommit((changes, commit) => {
      // with several replicas every one hears every commit, and kicks only the hosts it holds
      const { hosts, podsToRead } = this.triggers.wake(changes, commit);
      for (const h of hosts) void this.kick(h);
      for (const id of podsToRead) void this.kickPod(id);
      // a globally-networked pod that changed: every host with a pod of its account updates its entries
      const accounts = new Set<string>();
      for (const c of changes) if (c.collection === 'pods' && c.record && (c.record.overlayIp || c.record.globalNetworking)) accounts.add(c.record.accountId);
      for (const a of accounts) void this.kickAccount(a);
    });
    // a GPU that failed live: its host's pass moves the pods on it now, not at the next interval
    this.unsubscribeGpus = this.s.gpuHealthSignal.subscribe((e) => {
      if (e.health === 'FAILURE' && e.live) void this.kick(e.hostId);
    });
    this.leases.start();
    const tick = () => {
      if (this.stopped) return;
      void this.passAll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribeGpus?.();
    if (this.timer) clearTimeout(this.timer);
    for (const r of this.retries.values()) r.clear();
    await Promise.allSettled([...this.running.values(), this.pulls.stop()]);
    await this.queue.onIdle();
    // after the last pass: the other replicas take this one's hosts at their next sync
    await this.leases.stop();
  }

  async passAll(): Promise<void> {
    const hosts = await this.s.store.list('hosts');
    // the backoffs of hosts removed from the fleet go with them
    const ids = new Set(hosts.map((h) => h.id));
    for (const [hostId, r] of this.retries) {
      if (ids.has(hostId)) continue;
      r.clear();
      this.retries.delete(hostId);
    }
    // a pass in progress stands for the interval's: none is queued behind it
    await Promise.allSettled(hosts.filter((h) => this.leases.holds(h.id)).map((h) => this.kick(h.id, { unlessRunning: true })));
    // moved pods that found no free GPU try again; one replica does it (the leader; docs/replicas.md)
    if (this.leases.isLeader() && !this.stopped)
      await this.s.podMover.placeWaiting().catch((err: unknown) => this.opts.logger?.warn({ err }, 'placing moved pods that wait for a GPU failed'));
  }

  private async kickAccount(accountId: string): Promise<void> {
    const hosts = new Set((await this.s.store.list('pods', { accountId })).map((p) => p.hostId).filter((h): h is string => !!h));
    for (const h of hosts) void this.kick(h);
  }

  private async kickPod(podId: string): Promise<void> {
    const pod = await this.s.store.get('pods', podId);
    if (pod?.hostId) void this.kick(pod.hostId);
  }

  /** Runs a pass for the host now, or right after the one in progress (`unlessRunning`: or none). */
  kick(hostId: string, opts: { unlessRunning?: boolean } = {}): Promise<void> {
    // a host another replica holds is that replica's to reconcile (it hears the same commits)
    if (this.stopped || !this.leases.holds(hostId)) return Promise.resolve();
    const current = this.running.get(hostId);
    if (current) {
      if (!opts.unlessRunning) this.again.add(hostId);
      return current;
    }
    const run = this.queue
      .add(async () => {
        const started = performance.now();
        try {
          await this.reconcileHost(hostId);
        } finally {
          this.opts.observer?.reconciled(hostId, (performance.now() - started) / 1000);
        }
      })
      .catch((err: unknown) =>
        isGpufleetError(err) && err.code === 'HOST_LEASE_LOST'
          ? this.opts.logger?.info({ hostId }, 'reconcile lease lost to another replica: pass ended')
          : this.opts.logger?.error({ err, hostId }, 'reconcile failed'),
      )
      .finally(() => {
        this.running.delete(hostId);
        if (this.again.delete(hostId)) void this.kick(hostId);
      });
    this.running.set(hostId, run);
    return run;
  }

  private retriesOf(hostId: string): RetryBackoff {
    let r = this.retries.get(hostId);
    if (!r) {
      // a wait that ends kicks the host, so the retry comes when the reason says, not at the next interval
      r = new RetryBackoff(() => void this.kick(hostId), { ...DEFAULT_BACKOFF, ...this.opts.backoff });
      this.retries.set(hostId, r);
    }
    return r;
  }

  private async reconcileHost(hostId: string): Promise<void> {
    // the lease may have lapsed while the pass waited in the queue
    if (!this.leases.holds(hostId)) return;
    const host = await this.s.store.get('hosts', hostId);
    if (!host) return;
    let docker: HostDocker;
    let containers: ObservedContainer[];
    try {
      // the same round trip re-asserts the isolation rules of the accounts' bridges here (tenant-firewall.ts)
      const accounts = new Set((await this.s.store.list('pods', { hostId })).filter((p) => p.desiredStatus !== 'TERMINATED').map((p) => p.accountId));
      docker = new HostDocker(this.s.sshPool, this.s.fleet.target(host), this.networks.spare(hostId, accounts));
      containers = await docker.observe({ isolate: [...accounts].map((a) => tenantBridgeName(hostId, a)) });
      if (docker.firewallError) this.opts.logger?.warn({ hostId, reason: docker.firewallError }, 'tenant isolation rules could not be asserted');
    } catch (err) {
      await this.health.missed(host, err);
      if (!isGpufleetError(err)) this.opts.logger?.warn({ err, hostId }, 'heartbeat failed');
      // away long enough, the host is lost and its movable pods go elsewhere (lost-hosts.ts)
      await this.lost.check(hostId).catch((e: unknown) => this.opts.logger?.warn({ err: e, hostId }, 'moving the pods of a lost host failed'));
      return;
    }
    await this.health.seen(host, docker.self);
    let pods = await this.s.store.list('pods', { hostId });
    const metrics = this.pods.sampleMetrics(host, docker, containers);
    const byPod = new Map(containers.map((c) => [c.podId, c]));
    const podIds = new Set(pods.map((p) => p.id));
    const handover = new GpuHandover(containers);
    // labelled containers no pod on this host owns: a pod that was deleted, moved or never committed
    for (const c of containers) {
      if (!podIds.has(c.podId)) {
        this.opts.logger?.info({ hostId, podId: c.podId, container: c.id }, 'removing orphan container');
        await docker.remove(c.id);
        handover.released(c.podId);
      }
    }
    await this.moves.clearStuck(host, new Set(containers.map((c) => c.podId)));
    // pods on a GPU that failed live move off it (gpu-failure-moves.ts), and a drain with a deadline
    // moves pods off (host-drainer.ts); what they moved is no longer this host's
    if (await this.gpuFailures.step(host, docker, pods)) pods = await this.s.store.list('pods', { hostId });
    if (await this.drainer.step(host, docker, pods)) pods = await this.s.store.list('pods', { hostId });
    // the accounts' overlays here (routes, podnet1, internal DNS), with the containers as this pass found
    // them, before the pods' steps: a stop waiting out a container's grace period (or a slow pull) does
    // not keep a stopped pod's name and routes on the peers (or a new one's off) until it ends
    await this.overlay.reconcile(host, containers);
    // releases first, so GPUs freed by a stop are free before anything starts on them
    const order = (p: PodRecord) => (p.desiredStatus === 'RUNNING' ? 1 : 0);
    const retries = this.retriesOf(hostId);
    retries.retain((key) => key === NETWORK_CLEANUP || podIds.has(key));
    for (const pod of [...pods].sort((a, b) => order(a) - order(b))) {
      // a pod whose step failed waits out its backoff; a new intent (start, stop, restart, update) does not
      const intent = JSON.stringify(intentOf(pod));
      if (retries.waiting(pod.id, intent) > 0) continue;
      try {
        if (pod.status === 'TERMINATED' && !byPod.has(pod.id)) {
          await this.pods.finishTermination(docker, pod, pod.mounts.persistent ? podStorageDir(pod.id) : null);
          retries.forget(pod.id);
          continue;
        }
        // its GPUs are still in another pod's running container (a preempted pod not stopped yet): wait
        const blocker = pod.desiredStatus === 'RUNNING' && pod.allocated ? handover.blocker(pod) : null;
        if (blocker !== null) {
          await this.pods.waitingForGpus(pod);
          continue;
        }
        await this.pods.reconcile(host, docker, pod, byPod.get(pod.id) ?? null, metrics);
        if (pod.desiredStatus !== 'RUNNING') handover.released(pod.id);
        retries.forget(pod.id);
      } catch (err) {
        // a lost connection ends the pass (the next one observes the host again); a command that
        // failed on a live one is retried after a backoff; anything else is this pod's own failure
        if (isGpufleetError(err) && HOST_LOST.has(err.code)) throw err;
        if (!retriedLater(err)) {
          this.opts.logger?.warn({ err, hostId, podId: pod.id }, 'pod failed in reconcile');
          await this.pods.failPod(pod, err);
          continue;
        }
        const { delayMs, failures } = retries.failed(pod.id, intent);
        this.opts.logger?.warn({ err, hostId, podId: pod.id, failures, retryInMs: delayMs }, 'pod step failed on the host; retrying after a backoff');
        await this.pods.retrying(pod, retryReason(err, failures, delayMs));
      }
    }
    // pulls for pods that no longer want to run here are dropped (and cancelled when nobody else waits)
    this.pulls.retain(hostId, new Set(pods.filter((p) => p.desiredStatus === 'RUNNING' && p.allocated).map((p) => p.id)));
    // networks of accounts with no pod left here; a failure is retried after a backoff, never fatal
    if (retries.waiting(NETWORK_CLEANUP, '') > 0) return;
    try {
      await this.networks.collect(host.id, docker, pods);
      retries.forget(NETWORK_CLEANUP);
    } catch (err) {
      const { delayMs, failures } = retries.failed(NETWORK_CLEANUP, '');
      this.opts.logger?.warn({ err, hostId, failures, retryInMs: delayMs }, 'network cleanup failed; retrying after a backoff');
    }
  }
}
