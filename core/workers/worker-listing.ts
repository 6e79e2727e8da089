// What users see of an endpoint's workers: the v2 `Worker` list, the v1 pods of `includeWorkers`,
// health counts by state, and the endpoint's reason when it has fewer workers than it wants. Read
// from the records and what the control plane last heard from each worker; changes nothing.
import type { EndpointRecord, WorkerPod } from '../../model/index.ts';
import type { EndpointBackoff } from './worker-backoff.ts';
import { initializingReason } from './worker-health.ts';
import { inService, retired, workerState, type LivenessTable } from './worker-liveness.ts';
import { noWorkerCounts, type WorkerStateCounts } from '../jobs/index.ts';
import { toWorkerPodView, toWorkerView, type WorkerView } from './worker-view.ts';

export interface EndpointWorkerStatus {
  /** why the endpoint has fewer workers than it wants, or what its workers wait for; null when nothing */
  reason: string | null;
  throttled: number;
  /** no new worker starts before this (replacement backoff), or null */
  backoffUntil: string | null;
}

export type WorkerPodView = ReturnType<typeof toWorkerPodView>;

export interface ListingDeps {
  workersOf(endpointId: string): Promise<WorkerPod[]>;
  liveness: LivenessTable;
  backoff: EndpointBackoff;
  throttled(endpointId: string): { count: number; reason: string } | undefined;
  /** the origin as a reason names it, for a worker on that host */
  origin(hostId: string | null): string;
  clock(): number;
  /** how long a worker taken out for a fault stays listed as UNHEALTHY */
  unhealthyShownMs: number;
}

/** a worker running this long without calling probably cannot reach the control plane */
const SILENT_START_NOTED_MS = 60_000;

export class WorkerListing {
  constructor(private readonly d: ListingDeps) {}

  async views(e: EndpointRecord): Promise<WorkerView[]> {
    return (await this.shown(e.id)).map((pod) => this.view(pod, e));
  }

  async podViews(e: EndpointRecord): Promise<WorkerPodView[]> {
    return (await this.shown(e.id)).map((pod) => toWorkerPodView(pod, this.view(pod, e)));
  }

  async counts(endpointId: string): Promise<WorkerStateCounts> {
    const c = noWorkerCounts();
    for (const pod of await this.shown(endpointId)) {
      const s = workerState(pod, inService(pod) ? this.d.liveness.of(pod.id) : undefined);
      if (s === 'IDLE') c.idle++;
      else if (s === 'RUNNING') c.running++;
      else if (s === 'INITIALIZING') c.initializing++;
      else if (s === 'UNHEALTHY') c.unhealthy++;
    }
    c.ready = c.idle + c.running;
    c.throttled = this.d.throttled(endpointId)?.count ?? 0;
    return c;
  }

  async status(endpointId: string): Promise<EndpointWorkerStatus> {
    const now = this.d.clock();
    const b = this.d.backoff.until(endpointId, now);
    const t = this.d.throttled(endpointId);
    const reasons: string[] = [];
    if (b.until > now)
      reasons.push(`new workers wait until ${new Date(b.until).toISOString()} after ${b.faults} worker fault(s) in the last 10 minutes; last: ${b.reason}`);
    if (t) reasons.push(`${t.count} worker(s) wanted but not started: ${t.reason}`);
    if (!reasons.length)
      for (const p of await this.d.workersOf(endpointId)) {
        const why = inService(p) ? initializingReason(p, now, this.d.origin(p.hostId)) : null;
        if (why && p.startedAt && now - Date.parse(p.startedAt) > SILENT_START_NOTED_MS) {
          reasons.push(`worker ${p.id}: ${why}`);
          break;
        }
      }
    return { reason: reasons.length ? reasons.join('; ') : null, throttled: t?.count ?? 0, backoffUntil: b.until > now ? new Date(b.until).toISOString() : null };
  }

  /** in service, or taken out for a fault a moment ago (UNHEALTHY, with the reason), oldest first */
  private async shown(endpointId: string): Promise<WorkerPod[]> {
    const now = this.d.clock();
    return (await this.d.workersOf(endpointId))
      .filter((p) => !retired(p) || (p.worker.failed && now - Date.parse(p.terminatedAt ?? p.updatedAt) < this.d.unhealthyShownMs))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  private view(pod: WorkerPod, e: EndpointRecord): WorkerView {
    const now = this.d.clock();
    const l = inService(pod) ? this.d.liveness.of(pod.id) : undefined;
    const state = workerState(pod, l);
    // a load-balancing worker not in rotation: what its health check answered
    const unready = l?.check && !l.check.ready ? l.check.detail : null;
    // a worker that has called runs, whatever the host's last report said on the way ("starting
    // container"): the provisioner's reasons from before RUNNING are stale once it is IDLE or RUNNING
    const hostReason = (state === 'IDLE' || state === 'RUNNING') && pod.status !== 'RUNNING' ? null : pod.statusReason;
    const reason = pod.worker.retiredReason ?? unready ?? initializingReason(pod, now, this.d.origin(pod.hostId)) ?? hostReason;
    return toWorkerView(pod, state, e.version, reason, now);
  }
}
