// Serverless workers (docs/serverless.md): pod records with `endpointId` set, made from the endpoint's
// template, placed like pods, run by the provisioner and billed to the endpoint. This service makes and
// retires them, answers the worker protocol routes (WorkerDirectory: token, liveness, recycle), gives
// the provisioner a worker's protocol env, and shows workers under their endpoint. The autoscaler
// (autoscaler-loop.ts) decides when.
import type { EndpointRecord, PodRecord, WorkerPod } from '../../model/index.ts';
import { GpufleetError, isGpufleetError, isWorker } from '../../model/index.ts';
import type { SecretBox, Store } from '../../store/index.ts';
import type { Principal } from '../api-keys.ts';
import { accruePod } from '../billing.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Placer } from '../placement.ts';
import { DEFAULT_BACKOFF, EndpointBackoff, type BackoffOptions } from './worker-backoff.ts';
import type { WorkerCountsSource } from './worker-counts.ts';
import type { WorkerDirectory, WorkerHealthReport, WorkerIdentity } from './worker-directory.ts';
import { DEFAULT_PING_INTERVAL_MS, workerContainerEnv } from './worker-env.ts';
import { initializingReason, type HealthOptions } from './worker-health.ts';
import { LivenessTable, workerState } from './worker-liveness.ts';
import { placeWorker, workerDraft, newWorkerId } from './worker-record.ts';
import { tokenMatches, tokenSealContext, tokenWorkerId } from './worker-token.ts';
import { emptyCounts, toWorkerPodView, toWorkerView, type WorkerCounts, type WorkerView } from './worker-view.ts';

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
  queue?: JobQueue;
}

export interface EndpointWorkerStatus {
  /** why the endpoint has fewer workers than it wants, or what its workers wait for; null when nothing */
  reason: string | null;
  throttled: number;
  /** no new worker starts before this (replacement backoff), or null */
  backoffUntil: string | null;
}

const RETIRED_RECORD_MAX_MS = 10 * 60_000;
const LATE_TAKE_GRACE_MS = 2_000;

export class WorkerService implements WorkerDirectory, WorkerCountsSource {
  readonly liveness: LivenessTable;
  readonly backoff: EndpointBackoff;
  readonly clock: () => number;
  readonly health: Omit<HealthOptions, 'origin'>;
  private readonly pingIntervalMs: number;
  private readonly unhealthyShownMs: number;
  private queue: JobQueue | null = null;
  private unsubscribeQueue: (() => void) | null = null;
  private readonly throttled = new Map<string, { count: number; reason: string }>();
  private readonly readyWrites = new Map<string, Promise<void>>();
  private readonly kickListeners = new Set<(endpointId: string) => void>();

  constructor(
    private readonly deps: WorkerServiceDeps,
    private readonly opts: WorkerServiceOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.liveness = new LivenessTable(this.clock);
    this.backoff = new EndpointBackoff({ ...DEFAULT_BACKOFF, ...opts.backoff });
    this.pingIntervalMs = opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    this.health = { initTimeoutMs: opts.initTimeoutMs ?? 10 * 60_000, silentTimeoutMs: opts.silentTimeoutMs ?? 6 * this.pingIntervalMs };
    this.unhealthyShownMs = opts.unhealthyShownMs ?? 60_000;
    if (deps.queue) this.useQueue(deps.queue);
  }

  /** The job queue whose jobs workers run: lost workers' jobs go back to it; its timeouts recycle workers. */
  useQueue(queue: JobQueue): void {
    this.unsubscribeQueue?.();
    this.queue = queue;
    // a job past its executionTimeout recycles its worker (the job side may ask too, by recycle());
    // either way it counts as a fault of the endpoint's workers
    this.unsubscribeQueue = queue.onRecycle((ev) => {
      const reason = `job ${ev.jobId} ran past the endpoint's executionTimeout`;
      void this.retire(ev.workerId, reason, { fault: true })
        .then(async (did) => {
          const pod = did ? null : await this.deps.store.get('pods', ev.workerId);
          if (pod && isWorker(pod)) this.backoff.fault(pod.endpointId, this.clock(), `worker ${pod.id}: ${reason}`);
        })
        .catch((err: unknown) => this.opts.logger?.warn({ err, workerId: ev.workerId }, 'recycling a worker failed'));
    });
  }

  get jobQueue(): JobQueue | null {
    return this.queue;
  }

  origin(): string {
    return this.deps.origin();
  }

  // ---- WorkerDirectory (called by the worker protocol routes) ---------------------------------------

  async authenticate(token: string): Promise<WorkerIdentity | null> {
    const id = tokenWorkerId(token);
    if (id === null) return null;
    const pod = await this.deps.store.get('pods', id);
    if (!pod || !isWorker(pod) || !tokenMatches(token, pod.worker.tokenHash) || !inService(pod)) return null;
    return { workerId: pod.id, endpointId: pod.endpointId, accountId: pod.accountId };
  }

  async seen(workerId: string, report: WorkerHealthReport): Promise<void> {
    const pod = await this.deps.store.get('pods', workerId);
    if (!pod || !isWorker(pod) || !inService(pod)) return;
    if (!report.healthy) {
      const reason = `the worker reported itself unhealthy: ${report.check}: ${report.reason}`.slice(0, 500);
      await this.retire(workerId, reason, { fault: true });
      return;
    }
    const l = this.liveness.heard(workerId, report.inProgress);
    if (pod.worker.readyAt === null) await this.markReady(workerId);
    if (l.inProgress.length === 0) {
      // a worker of an older endpoint version stops as soon as it holds no job
      const e = await this.deps.store.get('endpoints', pod.endpointId);
      if (e && e.version !== pod.worker.version) await this.retire(workerId, `replaced by a worker of endpoint version ${e.version}`, { fault: false });
    }
  }

  async recycle(workerId: string, reason: string): Promise<void> {
    await this.retire(workerId, `recycled: ${reason}`.slice(0, 500), { fault: false });
  }

  // ---- for the job side and the autoscaler -----------------------------------------------------------

  /** A job was queued for the endpoint: the autoscaler looks at it now rather than at its next tick. */
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
        await this.deps.store.transact(async (tx) => {
          const t = await tx.get('templates', e.templateId);
          if (!t || (t.accountId !== e.accountId && !t.public))
            throw new GpufleetError('NOT_FOUND', `the endpoint's template ${e.templateId} is not readable by its account`);
          const iso = this.iso();
          const placed = await placeWorker(tx, this.deps.placer, e, workerDraft(e, t, newWorkerId(), this.deps.secretBox, iso));
          tx.put('pods', placed);
          await accruePod(tx, null, placed, iso);
        });
      } catch (err) {
        if (!isGpufleetError(err)) throw err;
        const capacity = err.code === 'CAPACITY_UNAVAILABLE' || err.code === 'PLACEMENT_IMPOSSIBLE';
        this.throttled.set(e.id, { count: n - made, reason: capacity ? `no capacity for a worker: ${err.message}` : `cannot start a worker: ${err.message}` });
        return made;
      }
    }
    this.throttled.delete(e.id);
    return made;
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

  /** Deletes retired records once the provisioner removed their containers (failed ones are shown a while first). */
  async forgetRetired(pods: readonly WorkerPod[]): Promise<void> {
    const now = this.clock();
    const gone = pods.filter((p) => {
      if (!retired(p)) return false;
      const age = now - Date.parse(p.terminatedAt ?? p.updatedAt);
      return (p.hostId === null && age >= (p.worker.failed ? this.unhealthyShownMs : 0)) || age >= RETIRED_RECORD_MAX_MS;
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

  // ---- what users see -------------------------------------------------------------------------------

  /** GET /v2/serverless/{id}/workers: the caller's endpoint's workers (404 for another account's). */
  async list(principal: Principal, endpointId: string): Promise<WorkerView[]> {
    return this.views(await ownEndpoint(this.deps.store, principal, endpointId));
  }

  async views(e: EndpointRecord): Promise<WorkerView[]> {
    return (await this.shownPods(e)).map(({ pod }) => this.view(pod, e));
  }

  /** v1 `includeWorkers`: the workers as v1 pods. */
  async podViews(e: EndpointRecord) {
    return (await this.shownPods(e)).map(({ pod }) => toWorkerPodView(pod, this.view(pod, e)));
  }

  /** health `workers`: counts by state, throttled included. */
  async counts(endpointId: string): Promise<WorkerCounts> {
    const c = emptyCounts();
    const e = await this.deps.store.get('endpoints', endpointId);
    if (!e) return c;
    for (const { pod } of await this.shownPods(e)) {
      const s = workerState(pod, this.liveness.of(pod.id));
      if (s === 'IDLE') c.idle++;
      else if (s === 'RUNNING') c.running++;
      else if (s === 'INITIALIZING') c.initializing++;
      else if (s === 'UNHEALTHY') c.unhealthy++;
    }
    c.ready = c.idle + c.running;
    c.throttled = this.throttled.get(endpointId)?.count ?? 0;
    return c;
  }

  /** Why the endpoint has fewer workers than it wants (backoff, capacity) or what they wait for. */
  async status(endpointId: string): Promise<EndpointWorkerStatus> {
    const now = this.clock();
    const b = this.backoff.until(endpointId, now);
    const t = this.throttled.get(endpointId);
    const reasons: string[] = [];
    if (b.until > now)
      reasons.push(`new workers wait until ${new Date(b.until).toISOString()} after ${b.faults} worker fault(s) in the last 10 minutes; last: ${b.reason}`);
    if (t) reasons.push(`${t.count} worker(s) wanted but not started: ${t.reason}`);
    if (!reasons.length)
      for (const p of await this.workersOf(endpointId)) {
        const why = inService(p) ? initializingReason(p, now, this.origin()) : null;
        // a worker that has not called after a minute probably cannot reach the control plane
        if (why && p.startedAt && now - Date.parse(p.startedAt) > 60_000) {
          reasons.push(`worker ${p.id}: ${why}`);
          break;
        }
      }
    return { reason: reasons.length ? reasons.join('; ') : null, throttled: t?.count ?? 0, backoffUntil: b.until > now ? new Date(b.until).toISOString() : null };
  }

  private async shownPods(e: EndpointRecord): Promise<{ pod: WorkerPod }[]> {
    const now = this.clock();
    return (await this.workersOf(e.id))
      .filter((p) => !retired(p) || (p.worker.failed && now - Date.parse(p.terminatedAt ?? p.updatedAt) < this.unhealthyShownMs))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
      .map((pod) => ({ pod }));
  }

  private view(pod: WorkerPod, e: EndpointRecord): WorkerView {
    const now = this.clock();
    const state = workerState(pod, inService(pod) ? this.liveness.of(pod.id) : undefined);
    const reason = pod.worker.retiredReason ?? initializingReason(pod, now, this.origin()) ?? pod.statusReason;
    return toWorkerView(pod, state, e.version, reason, now);
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
        })
        .finally(() => this.readyWrites.delete(workerId));
      this.readyWrites.set(workerId, p);
    }
    await p;
  }

  private iso(): string {
    return new Date(this.clock()).toISOString();
  }

  close(): void {
    this.unsubscribeQueue?.();
    this.unsubscribeQueue = null;
  }
}

/** In service: not retired, and still meant to run (a crashed container is out until it is retired). */
export function inService(pod: WorkerPod): boolean {
  return pod.worker.retiredReason === null && pod.desiredStatus === 'RUNNING';
}

/** Taken out by the autoscaler or the protocol (terminated); its record goes once its container is gone. */
export function retired(pod: WorkerPod): boolean {
  return pod.worker.retiredReason !== null || pod.desiredStatus === 'TERMINATED';
}

async function ownEndpoint(store: Store, principal: Principal, id: string): Promise<EndpointRecord> {
  const e = await store.get('endpoints', id);
  if (!e || e.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${id} was not found.`);
  return e;
}
