// The autoscaler's loop, started beside the reconciler: every tick (500 ms by default, and at once when
// a job is queued, a worker is retired or an endpoint changes) each queue endpoint's workers are
// checked (worker-health.ts), the decision is made (autoscaler.ts) and carried out; a load-balancing
// endpoint's demand is its requests held and in flight (RequestTraffic, fed by the gateway). Level-triggered
// like the reconciler: a tick starts from the store and the queue, so a restart converges the same way.
import type { EndpointRecord, HostRecord, WorkerPod } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import { decideScale, type ScalerWorker } from './autoscaler.ts';
import { assessWorker } from './worker-health.ts';
import { inService, retired, workerState } from './worker-liveness.ts';
import type { WorkerService } from './worker-service.ts';

export interface AutoscalerOptions {
  /** ms between ticks; default 500 */
  tickMs?: number;
  logger?: { warn(obj: object, msg: string): void };
}

export class Autoscaler {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly unsubscribe: (() => void)[] = [];
  /** endpoints that had workers at the last tick: one missing from the store now was deleted */
  private withWorkers = new Set<string>();
  /** the first tick looks for workers of endpoints deleted while the control plane was down */
  private scanOrphans = true;

  constructor(
    private readonly workers: WorkerService,
    private readonly store: Store,
    private readonly queue: JobQueue,
    private readonly opts: AutoscalerOptions = {},
  ) {}

  start(): void {
    this.stopped = false;
    this.unsubscribe.push(
      // an endpoint created, changed or deleted is looked at now
      this.store.onCommit((changes) => {
        if (changes.some((c) => c.collection === 'endpoints')) this.kick();
      }),
      this.workers.onKick(() => this.kick()),
    );
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }

  /** A tick now, or right after the one running. */
  kick(): void {
    if (this.stopped) return;
    if (this.current) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.current = this.tick()
        .catch((err: unknown) => this.opts.logger?.warn({ err }, 'autoscaler tick failed'))
        .finally(() => {
          this.current = null;
          if (this.stopped) return;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : (this.opts.tickMs ?? 500));
        });
    }, ms);
  }

  /** One pass over every endpoint (tests call it directly, with the service's clock). */
  async tick(): Promise<void> {
    const endpoints = await this.store.list('endpoints');
    const known = new Set(endpoints.map((e) => e.id));
    const withWorkers = new Set<string>();
    for (const e of endpoints) {
      try {
        if (await this.tickEndpoint(e)) withWorkers.add(e.id);
      } catch (err) {
        withWorkers.add(e.id);
        this.opts.logger?.warn({ err, endpointId: e.id }, 'autoscaling an endpoint failed');
      }
    }
    const gone = [...this.withWorkers].filter((id) => !known.has(id));
    if (this.scanOrphans) {
      this.scanOrphans = false;
      for (const p of await this.store.list('pods')) if (p.endpointId !== undefined && !known.has(p.endpointId)) gone.push(p.endpointId);
    }
    this.withWorkers = withWorkers;
    for (const id of new Set(gone)) await this.stopAll(id);
  }

  /** One endpoint's tick; true when it has worker records left. */
  private async tickEndpoint(e: EndpointRecord): Promise<boolean> {
    const pods = await this.workers.workersOf(e.id);
    const now = this.workers.clock();
    const hosts = new Map<string, HostRecord | undefined>();
    const live: WorkerPod[] = [];
    for (const p of pods) {
      if (retired(p)) continue;
      if (p.hostId !== null && !hosts.has(p.hostId)) hosts.set(p.hostId, await this.store.get('hosts', p.hostId));
      const host = p.hostId === null ? undefined : hosts.get(p.hostId);
      const verdict = assessWorker(p, e, host, inService(p) ? this.workers.liveness.of(p.id) : undefined, now, { ...this.workers.health, origin: this.workers.reachedAt(p.hostId) });
      if (verdict) await this.workers.retire(p.id, verdict.reason, { fault: verdict.fault });
      else live.push(p);
    }
    {
      // a load-balancing endpoint's demand is its HTTP requests, held and in flight (the gateway's)
      const lb = e.type === 'LOAD_BALANCER';
      const depth = lb ? this.workers.requests.depth(e.id) : await this.queue.depth(e.id);
      const decision = decideScale({ endpoint: e, depth, workers: live.map((p) => this.scalerView(p, e, now)), accounted: lb });
      for (const r of decision.retire) {
        // the queue (the gateway) knows best whether an "idle" worker took a job (a request) since it last reported
        if (lb ? this.workers.requests.inFlightOn(r.id) > 0 : (await this.queue.heldBy(r.id)).length > 0) continue;
        await this.workers.retire(r.id, r.reason, { fault: false });
      }
      const wait = this.workers.backoff.until(e.id, now);
      if (decision.create > 0 && wait.until <= now) await this.workers.create(e, decision.create);
      else if (decision.create === 0) this.workers.clearThrottle(e.id);
    }
    await this.workers.forgetRetired(pods);
    return (await this.workers.workersOf(e.id)).length > 0;
  }

  private scalerView(p: WorkerPod, e: EndpointRecord, now: number): ScalerWorker {
    const l = this.workers.liveness.of(p.id);
    const s = workerState(p, l);
    return {
      id: p.id,
      state: s === 'RUNNING' || s === 'IDLE' ? s : 'INITIALIZING',
      stale: p.worker.version !== e.version,
      // idle counts from its last job, or from its first call when it has had none
      idleMs: s === 'IDLE' && l.idleSince !== undefined ? Math.max(0, now - Math.max(l.idleSince, Date.parse(p.worker.readyAt ?? p.createdAt))) : 0,
    };
  }

  /** The endpoint is gone: its workers stop (the job side cancels its jobs). */
  private async stopAll(endpointId: string): Promise<void> {
    const pods = await this.workers.workersOf(endpointId);
    for (const p of pods) if (!retired(p)) await this.workers.retire(p.id, 'endpoint deleted', { fault: false });
    this.workers.backoff.forget(endpointId);
    this.workers.clearThrottle(endpointId);
    await this.workers.forgetRetired(await this.workers.workersOf(endpointId));
  }
}
