// The autoscaler's decision for one endpoint (for a load balancer, held requests count as queued and
// requests in flight as in progress), pure: from the queue's depth and the endpoint's
// workers, how many new workers to start and which to stop (docs/serverless.md, "Autoscaler").
//   QUEUE_DELAY (scalerValue = seconds a job may wait): a queued job that no worker is free to take
//     starts one at once (this is also the scale from zero); while the oldest queued job has waited
//     longer than scalerValue and fewer workers are starting than jobs wait, one more per tick.
//   REQUEST_COUNT (scalerValue = jobs per worker): ceil((inQueue + inProgress) / scalerValue).
// Always within workersMin..workersMax. A worker idle for idleTimeout seconds stops when there are
// more than wanted, never below workersMin. Workers of an older version (stale) are not counted:
// new ones replace them, and each stale one stops as soon as it holds no job.
import type { EndpointRecord } from '../../model/index.ts';
import type { QueueDepth } from '../jobs/index.ts';

export interface ScalerWorker {
  id: string;
  state: 'INITIALIZING' | 'IDLE' | 'RUNNING';
  /** made for an older endpoint version */
  stale: boolean;
  /** ms since it last held a job (or became ready); 0 unless IDLE */
  idleMs: number;
}

export type ScalerEndpoint = Pick<EndpointRecord, 'workersMin' | 'workersMax' | 'scalerType' | 'scalerValue' | 'idleTimeout' | 'version'>;

export interface ScaleInput {
  endpoint: ScalerEndpoint;
  depth: QueueDepth;
  /** workers in service (not retired) */
  workers: readonly ScalerWorker[];
  /**
   * every unit in progress is known to be on a RUNNING worker (a load balancer's requests): scaling
   * down need not wait for a worker to report a job it may have taken
   */
  accounted?: boolean;
}

export interface ScaleDecision {
  /** workers of the current version wanted */
  target: number;
  /** new workers to start */
  create: number;
  /** workers to stop, with the reason shown on them */
  retire: { id: string; reason: string }[];
}

export function decideScale({ endpoint: e, depth, workers, accounted = false }: ScaleInput): ScaleDecision {
  const fresh = workers.filter((w) => !w.stale);
  const idleTimeoutMs = e.idleTimeout * 1000;
  const expired = fresh.filter((w) => w.state === 'IDLE' && w.idleMs >= idleTimeoutMs).sort((a, b) => b.idleMs - a.idleMs || (a.id < b.id ? -1 : 1));
  const queued = depth.inQueue;

  let need: number;
  if (e.scalerType === 'REQUEST_COUNT') {
    need = Math.ceil((queued + depth.inProgress) / Math.max(1, e.scalerValue));
  } else if (queued > 0) {
    const free = fresh.filter((w) => w.state !== 'RUNNING').length;
    const starting = fresh.filter((w) => w.state === 'INITIALIZING').length;
    need = fresh.length;
    if (free === 0) need += 1;
    else if (depth.oldestAgeMs > e.scalerValue * 1000 && starting < queued) need += 1;
  } else {
    need = fresh.length - expired.length;
  }
  const target = Math.min(Math.max(need, e.workersMin), e.workersMax);

  const retire: ScaleDecision['retire'] = [];
  for (const w of workers)
    if (w.stale && w.state !== 'RUNNING') retire.push({ id: w.id, reason: `replaced by a worker of endpoint version ${e.version}` });
  // a job in progress that no RUNNING worker accounts for means a worker took one since it last
  // reported: stopping an "idle" worker now could cut it, so scaling down waits a tick
  const running = workers.filter((w) => w.state === 'RUNNING').length;
  const surplus = fresh.length - target;
  if (surplus > 0 && (accounted || depth.inProgress <= running))
    for (const w of expired.slice(0, surplus))
      retire.push({ id: w.id, reason: `idle for ${Math.floor(w.idleMs / 1000)} s (idleTimeout ${e.idleTimeout} s)` });

  return { target, create: Math.max(0, target - fresh.length), retire };
}
