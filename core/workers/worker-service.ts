// Serverless workers (docs/serverless.md): pod records with `endpointId` set, made from the endpoint's
// template, placed like pods, run by the provisioner and billed to the endpoint. This service makes and
// retires them, answers the worker protocol routes (WorkerDirectory: token, liveness, recycle), gives
// the provisioner a worker's protocol env, and shows workers under their endpoint. The autoscaler
// (autoscaler-loop.ts) decides when.
import { gpuTypeWarnings, noHostReason } from '../endpoints/index.ts';
import type { EndpointRecord, PodRecord, WorkerPod } from '../../model/index.ts';
import { GpufleetError, isGpufleetError, isWorker } from '../../model/index.ts';
import type { SecretBox, Store } from '../../store/index.ts';
import { accruePod } from '../billing/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Placer } from '../hosts/index.ts';
import type { Admission } from '../quotas/index.ts';
import { DEFAULT_BACKOFF, EndpointBackoff, type BackoffOptions } from './worker-backoff.ts';
import type { WorkerCountsSource, WorkerDirectory, WorkerHealthReport, WorkerIdentity, WorkerStateCounts } from '../jobs/index.ts';
import { DEFAULT_PING_INTERVAL_MS, workerContainerEnv } from './worker-env.ts';
import type { HealthOptions } from './worker-health.ts';
import { inService, isBusy, LivenessTable, retired } from './worker-liveness.ts';
import { WorkerListing, type EndpointWorkerStatus, type WorkerPodView } from './worker-listing.ts';
import { placeWorker, workerDraft, newWorkerId } from './worker-record.ts';
import { RequestTraffic } from './request-traffic.ts';
import { tokenMatches, tokenSealContext, tokenWorkerId } from './worker-token.ts';
import type { WorkerView } from './worker-view.ts';
import { workerTemplate } from '../endpoints/index.ts';
import type { Principal } from '../../model/index.ts';

export type { EndpointWorkerStatus } from './worker-listing.ts';
export { inService, retired } from './worker-liveness.ts';

export interface WorkerServiceOptions {
  /** ms since the epoch; injectable for tests (record timestamps follow it too) */
  clock?: () => number;
  /** RUNPOD_PING_INTERVAL given to workers; default 10000 */
  pingIntervalMs?: number;
  /** see HealthOptions; defaults 10 min and 6 ping intervals */
  initTimeoutMs?: number;
  silentTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  /** a worker taken out for a fault stays listed (UNHEALTHY, with the reason) this long; default 60 s */
  unhealthyShownMs?: number;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export interface WorkerServiceDeps {
  store: Store;
  placer: Placer;
  secretBox: SecretBox;
  /** the origin workers call (config.ts workerOrigin), read when a container is built */
  origin: () => string;
  /** why a host's worker relay is down, or null (docs/serverless.md, "The worker relay"): named in the reasons of workers that have not called */
  relayProblem?: (hostId: string) => string | null;
  queue?: JobQueue;
  /** per-account limits (workers, GPUs, spend), the monthly budget, and credits for load-balancing workers (core/quotas) */
  admission?: Admission;
}

const RETIRED_RECORD_MAX_MS = 10 * 60_000;
const LATE_TAKE_GRACE_MS = 2_000;

export class WorkerService implements WorkerDirectory, WorkerCountsSource {
  readonly liveness: LivenessTable;
  readonly backoff: EndpointBackoff;
  readonly clock: () => number;
  readonly health: Omit<HealthOptions, 'origin'>;
  /** load-balancing endpoints: requests in flight and held, as the gateway reports them (docs/gateway.md) */
  readonly requests: RequestTraffic;
  private readonly pingIntervalMs: number;
  private readonly unhealthyShownMs: number;
  private queue: JobQueue | null = null;
  private readonly throttled = new Map<string, { count: number; reason: string }>();
  private readonly readyWrites = new Map<string, Promise<void>>();
  private readonly kickListeners = new Set<(endpointId: string) => void>();
  private readonly readyListeners = new Set<(endpointId: string, coldStartMs: number) => void>();
  private readonly listing: WorkerListing;

  constructor(
    private readonly deps: WorkerServiceDeps,
    private readonly opts: WorkerServiceOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.liveness = new LivenessTable(this.clock);
    this.requests = new RequestTraffic(this.liveness, this.clock);
    this.backoff = new EndpointBackoff({ ...DEFAULT_BACKOFF, ...opts.backoff });
    this.pingIntervalMs = opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    this.health = { initTimeoutMs: opts.initTimeoutMs ?? 10 * 60_000, silentTimeoutMs: opts.silentTimeoutMs ?? 6 * this.pingIntervalMs };
    this.unhealthyShownMs = opts.unhealthyShownMs ?? 60_000;
    this.listing = new WorkerListing({
      workersOf: (id) => this.workersOf(id),
      liveness: this.liveness,
      backoff: this.backoff,
      throttled: (id) => this.throttled.get(id),
      origin: (hostId) => this.reachedAt(hostId),
      clock: this.clock,
      unhealthyShownMs: this.unhealthyShownMs,
    });
    if (deps.queue) this.useQueue(deps.queue);
  }

  /**
   * The job queue whose jobs workers run: a retired worker's jobs go back to it. A job past its
   * executionTimeout reaches this service through recycle() from the job side (one path, one retire).
   */
  useQueue(queue: JobQueue): void {
    this.queue = queue;
  }

  get jobQueue(): JobQueue | null {
    return this.queue;
  }

  origin(): string {
    return this.deps.origin();
  }

  /** the origin as a worker's reason names it: with its host's worker relay's problem while it is down */
  reachedAt(hostId: string | null): string {
    const problem = hostId !== null ? (this.deps.relayProblem?.(hostId) ?? null) : null;
    return problem === null ? this.origin() : `${this.origin()} (its host's worker relay is down: ${problem})`;
  }

  // ---- WorkerDirectory (called by the worker protocol routes) ---------------------------------------

  async authenticate(token: string): Promise<WorkerIdentity | null> {
    const id = tokenWorkerId(token);
    if (id === null) return null;
    const pod = await this.deps.store.get('pods', id);
    if (!pod || !isWorker(pod) || !tokenMatches(token, pod.worker.tokenHash) || !inService(pod)) return null;
    return { workerId: pod.id, endpointId: pod.endpointId, accountId: pod.accountId, hostId: pod.hostId };
  }

  async seen(workerId: string, report: WorkerHealthReport): Promise<void> {
    const pod = await this.deps.store.get('pods', workerId);
    if (!pod || !isWorker(pod) || !inService(pod)) return;
    if (!report.healthy) {
      const reason = `the worker reported itself unhealthy: ${report.check}: ${report.reason}`.slice(0, 500);
      await this.retire(workerId, reason, { fault: true });
      return;
    }
    const l = this.liveness.heard(workerId, report.inProgress, report.workerBusy);
    if (pod.worker.readyAt === null) await this.markReady(workerId);
    if (!isBusy(l)) {
      // a worker of an older endpoint version stops as soon as it holds no job
      const e = await this.deps.store.get('endpoints', pod.endpointId);
      if (e && e.version !== pod.worker.version) await this.retire(workerId, `replaced by a worker of endpoint version ${e.version}`, { fault: false });
    }
  }

  /** stopPod / refresh_worker (not a fault), or a job past its executionTimeout (a fault: backoff) */
  async recycle(workerId: string, reason: string, opts: { fault?: boolean } = {}): Promise<void> {
    await this.retire(workerId, `recycled: ${reason}`.slice(0, 500), { fault: opts.fault ?? false });
  }

  // ---- for the job side and the autoscaler -----------------------------------------------------------

  /** A job was queued for the endpoint: the autoscaler looks at it now rather than at its next tick. */
  /** An endpoint create or update answer's warnings: each of its GPU types no enrolled host has (gpu-coverage.ts). */
  gpuTypeWarnings(e: EndpointRecord): Promise<string[]> {
    return gpuTypeWarnings(this.deps.store, e);
  }

  /** WorkerDirectory.noWorkerReason: none of the endpoint's GPU types is on an enrolled host (gpu-coverage.ts) */
  async noWorkerReason(endpointId: string): Promise<string | null> {
    const e = await this.deps.store.get('endpoints', endpointId);
    return e ? noHostReason(this.deps.store, e) : null;
  }

  notifyQueued(endpointId: string): void {
    this.kick(endpointId);
  }

  onKick(listener: (endpointId: string) => void): () => void {
    this.kickListeners.add(listener);
    return () => this.kickListeners.delete(listener);
  }

  private kick(endpointId: string): void {
    for (const l of this.kickListeners) l(endpointId);
  }

  /** Every worker record of the endpoint, retired ones included. */
  async workersOf(endpointId: string): Promise<WorkerPod[]> {
    return (await this.deps.store.list('pods', { endpointId })).filter(isWorker);
  }

  /**
   * Starts `n` new workers of the endpoint, each placed in its own transaction; stops at the first
   * that finds no capacity and counts the rest as throttled. Answers how many started.
   */
  async create(e: EndpointRecord, n: number): Promise<number> {
    let made = 0;
    for (; made < n; made++) {
      try {
        const placed = await this.deps.store.transact(async (tx) => {
          // as the endpoint is now: a change or a delete since the tick read it wins
          const cur = await tx.get('endpoints', e.id);
          if (!cur) return null;
          // another account's public template: the copy this endpoint chose (template-pins.ts)
          const t = workerTemplate(cur, cur.templatePin ? undefined : await tx.get('templates', cur.templateId));
          if (!t) throw new GpufleetError('NOT_FOUND', `the endpoint's template ${cur.templateId} is not readable by its account`);
          const iso = this.iso();
          const placed = await placeWorker(tx, this.deps.placer, cur, workerDraft(cur, t, newWorkerId(), this.deps.secretBox, iso));
          await this.deps.admission?.admit(tx, {
            accountId: cur.accountId,
            what: 'serverless worker',
            gpu: { typeId: placed.gpu!.id, count: placed.gpu!.count },
            workers: 1,
            spendPerHour: placed.costPerHr,
            // load-balancing endpoints draw on credits like pods; queue endpoints' jobs hold theirs at submission
            needsCredits: cur.type === 'LOAD_BALANCER',
          });
          tx.put('pods', placed);
          await accruePod(tx, null, placed, iso);
          return placed;
        });
        if (!placed) return made;
      } catch (err) {
        if (!isGpufleetError(err)) throw err;
        // a type no enrolled host has is said as such, not as the placement's diagnosis
        const noHost = err.code === 'PLACEMENT_IMPOSSIBLE' ? await noHostReason(this.deps.store, e) : null;
        this.throttled.set(e.id, { count: n - made, reason: noHost ?? throttleReason(err) });
        return made;
      }
    }
    this.throttled.delete(e.id);
    return made;
  }

  /**
   * Retires the workers of the account's load-balancing endpoints (their credits ran out:
   * core/quotas/spend-guard.ts); the autoscaler's next worker is refused by admission until credits
   * are added, and the endpoint says why. Answers how many.
   */
  async retireLoadBalancersOf(accountId: string, reason: string): Promise<number> {
    let n = 0;
    for (const e of await this.deps.store.list('endpoints', { accountId })) {
      if (e.type !== 'LOAD_BALANCER') continue;
      for (const w of await this.workersOf(e.id)) if (!retired(w) && (await this.retire(w.id, reason, { fault: false }))) n++;
    }
    return n;
  }

  /** The endpoint wants no more workers than it has: nothing is throttled. */
  clearThrottle(endpointId: string): void {
    this.throttled.delete(endpointId);
  }

  /**
   * Takes a worker out of service: its record is terminated (billing closes, the provisioner removes
   * the container, its token stops working), its jobs go back to the queue, and a fault makes the
   * endpoint back off before it starts the next worker. False when it was already out.
   */
  async retire(workerId: string, reason: string, opts: { fault: boolean }): Promise<boolean> {
    const iso = this.iso();
    const done = await this.deps.store.transact(async (tx) => {
      const pod = await tx.get('pods', workerId);
      if (!pod || !isWorker(pod) || retired(pod)) return null;
      const next: WorkerPod = {
        ...pod,
        status: 'TERMINATED',
        desiredStatus: 'TERMINATED',
        allocated: false,
        gpuUuids: [],
        statusReason: reason,
        terminatedAt: iso,
        updatedAt: iso,
        worker: { ...pod.worker, retiredReason: reason, failed: opts.fault },
      };
      tx.put('pods', next);
      await accruePod(tx, pod, next, iso);
      return next;
    });
    if (!done) return false;
    this.liveness.forget(workerId);
    if (opts.fault) this.backoff.fault(done.endpointId, this.clock(), `worker ${workerId}: ${reason}`);
    this.opts.logger?.info({ workerId, endpointId: done.endpointId, reason, fault: opts.fault }, 'worker retired');
    // parked take polls end and held jobs go back to the queue (a retry counted); none are lost
    await this.lost(workerId, reason);
    // a take that authenticated just before and parks just after would still be handed a job: once
    // more a moment later, so such a job goes back at once rather than when its lease runs out
    setTimeout(() => void this.lost(workerId, reason), LATE_TAKE_GRACE_MS).unref();
    this.kick(done.endpointId);
    return true;
  }

  private async lost(workerId: string, reason: string): Promise<void> {
    await this.queue?.workerLost(workerId, reason).catch((err: unknown) => this.opts.logger?.warn({ err, workerId }, 'workerLost failed'));
  }

  /**
   * Deletes retired records once the provisioner removed their containers and a minute has passed
   * (failed ones are listed as UNHEALTHY meanwhile; the others stay readable in the store, for whoever
   * asks why a worker went), or after 10 minutes whatever the host did.
   */
  async forgetRetired(pods: readonly WorkerPod[]): Promise<void> {
    const now = this.clock();
    const gone = pods.filter((p) => {
      if (!retired(p)) return false;
      const age = now - Date.parse(p.terminatedAt ?? p.updatedAt);
      return (p.hostId === null && age >= this.unhealthyShownMs) || age >= RETIRED_RECORD_MAX_MS;
    });
    if (!gone.length) return;
    await this.deps.store.transact(async (tx) => {
      for (const p of gone) {
        const cur = await tx.get('pods', p.id);
        if (cur && isWorker(cur) && retired(cur)) tx.delete('pods', p.id);
      }
    });
  }

  // ---- the provisioner -------------------------------------------------------------------------------

  /** The worker protocol env of a worker's container (worker-env.ts); {} for any other pod. */
  containerEnv(pod: PodRecord): Record<string, string> {
    if (!isWorker(pod)) return {};
    const token = this.deps.secretBox.open(pod.worker.tokenSealed, tokenSealContext(pod.id));
    return workerContainerEnv(pod, { origin: this.origin(), token, pingIntervalMs: this.pingIntervalMs });
  }

  // ---- what users see (worker-listing.ts) ----------------------------------------------------------

  /** GET /v2/serverless/{id}/workers: the caller's endpoint's workers (404 for another account's). */
  async list(principal: Principal, endpointId: string): Promise<WorkerView[]> {
    return this.listing.views(await ownEndpoint(this.deps.store, principal, endpointId));
  }

  views(e: EndpointRecord): Promise<WorkerView[]> {
    return this.listing.views(e);
  }

  /** v1 `includeWorkers`: the workers as v1 pods. */
  podViews(e: EndpointRecord): Promise<WorkerPodView[]> {
    return this.listing.podViews(e);
  }

  /** health `workers`: counts by state, throttled included. */
  counts(endpointId: string): Promise<WorkerStateCounts> {
    return this.listing.counts(endpointId);
  }

  /** Why the endpoint has fewer workers than it wants (backoff, capacity) or what they wait for. */
  status(endpointId: string): Promise<EndpointWorkerStatus> {
    return this.listing.status(endpointId);
  }

  private async markReady(workerId: string): Promise<void> {
    let p = this.readyWrites.get(workerId);
    if (!p) {
      const iso = this.iso();
      p = this.deps.store
        .transact(async (tx) => {
          const pod = await tx.get('pods', workerId);
          if (!pod || !isWorker(pod) || pod.worker.readyAt !== null || !inService(pod)) return;
          tx.put('pods', { ...pod, worker: { ...pod.worker, readyAt: iso } });
          return pod;
        })
        // told once, by the replica whose write made the worker ready: from its record to its first contact
        .then((pod) => {
          if (pod) for (const l of this.readyListeners) l(pod.endpointId, Math.max(0, Date.parse(iso) - Date.parse(pod.createdAt)));
        })
        .finally(() => this.readyWrites.delete(workerId));
      this.readyWrites.set(workerId, p);
    }
    await p;
  }

  /** Each worker that becomes ready (its first job-take or ping), with its cold start; returns the unsubscribe. */
  onReady(listener: (endpointId: string, coldStartMs: number) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  private iso(): string {
    return new Date(this.clock()).toISOString();
  }

  close(): void {
    // nothing to release: the queue is only called, not subscribed to
  }
}

/** Why the endpoint has fewer workers than it wants, as its status shows it. */
function throttleReason(err: GpufleetError): string {
  if (err.code === 'CAPACITY_UNAVAILABLE' || err.code === 'PLACEMENT_IMPOSSIBLE') return `no capacity for a worker: ${err.message}`;
  // the account's limit (workers, GPUs, spend), budget or credits: the autoscaler stops there, no job fails
  if (err.code === 'QUOTA_EXCEEDED' || err.code === 'BUDGET_EXHAUSTED' || err.code === 'CREDITS_EXHAUSTED') return `stopped at the account's limit: ${err.message}`;
  return `cannot start a worker: ${err.message}`;
}

async function ownEndpoint(store: Store, principal: Principal, id: string): Promise<EndpointRecord> {
  const e = await store.get('endpoints', id);
  if (!e || e.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${id} was not found.`);
  return e;
}
