// The load-balancing endpoints and their workers as the gateway routes to them, kept in memory and fed
// by the store's commits (the core's change notifications): so the gateway needs no store read per
// request, and could run as a process of its own that follows the same notifications.
import type { EndpointRecord, PodRecord, WorkerPod } from '../model/index.ts';
import { isWorker } from '../model/index.ts';
import type { Store } from '../store/index.ts';
import { inService } from '../core/index.ts';

/** A worker the gateway may route to: its container runs. */
export interface LbWorker {
  id: string;
  endpointId: string;
  accountId: string;
  hostId: string;
  containerId: string;
  /** where the worker's HTTP server listens: its env's PORT (default 80) */
  port: number;
  /** PORT_HEALTH (default PORT) and HEALTH_CHECK_PATH (default /ping) */
  healthPort: number;
  healthPath: string;
  /** the last health check answered 200: in rotation */
  ready: boolean;
}

export interface LbEndpoint {
  id: string;
  accountId: string;
}

const portOf = (v: string | undefined, fallback: number): number => {
  const n = v === undefined ? NaN : Number(v);
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : fallback;
};

/** The worker's address and health check, from its env (template's under the endpoint's). */
export function workerPorts(env: Record<string, string>): { port: number; healthPort: number; healthPath: string } {
  const port = portOf(env.PORT, 80);
  const path = env.HEALTH_CHECK_PATH;
  return { port, healthPort: portOf(env.PORT_HEALTH, port), healthPath: path && path.startsWith('/') ? path : '/ping' };
}

export class WorkerTable {
  private readonly endpoints = new Map<string, LbEndpoint>();
  private readonly workers = new Map<string, LbWorker>();
  private readonly byEndpoint = new Map<string, Set<LbWorker>>();
  private readonly goneListeners = new Set<(w: LbWorker) => void>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly store: Store) {}

  /** Loads what the store holds and follows its commits from then on. */
  async start(): Promise<void> {
    this.unsubscribe = this.store.onCommit((changes) => {
      for (const c of changes) {
        if (c.collection === 'endpoints') this.endpointChanged(c.id, c.deleted ? undefined : c.record);
        else if (c.collection === 'pods') this.podChanged(c.id, c.deleted ? undefined : c.record);
      }
    });
    for (const e of await this.store.list('endpoints')) this.endpointChanged(e.id, e);
    for (const p of await this.store.list('pods')) if (p.endpointId !== undefined && this.endpoints.has(p.endpointId)) this.podChanged(p.id, p);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** A worker left the table (retired, container gone, endpoint deleted). */
  onGone(listener: (w: LbWorker) => void): () => void {
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  isLoadBalancer(endpointId: string): boolean {
    return this.endpoints.has(endpointId);
  }

  endpoint(endpointId: string): LbEndpoint | undefined {
    return this.endpoints.get(endpointId);
  }

  worker(workerId: string): LbWorker | undefined {
    return this.workers.get(workerId);
  }

  workersOf(endpointId: string): Iterable<LbWorker> {
    return this.byEndpoint.get(endpointId) ?? [];
  }

  all(): Iterable<LbWorker> {
    return this.workers.values();
  }

  private endpointChanged(id: string, e: EndpointRecord | undefined): void {
    if (e?.type === 'LOAD_BALANCER') {
      const known = this.endpoints.has(id);
      this.endpoints.set(id, { id, accountId: e.accountId });
      // a queue endpoint turned load balancer: its workers are replaced, but take what runs
      if (!known)
        void this.store.list('pods', { endpointId: id }).then((pods) => {
          for (const p of pods) if (this.endpoints.has(id)) this.podChanged(p.id, p);
        });
      return;
    }
    if (!this.endpoints.delete(id)) return;
    for (const w of [...(this.byEndpoint.get(id) ?? [])]) this.remove(w.id);
    this.byEndpoint.delete(id);
  }

  private podChanged(id: string, p: PodRecord | undefined): void {
    const routable = p !== undefined && isWorker(p) && this.endpoints.has(p.endpointId) && runs(p);
    if (!routable) {
      this.remove(id);
      return;
    }
    const w = p as WorkerPod;
    const cur = this.workers.get(id);
    const next: LbWorker = {
      id,
      endpointId: w.endpointId,
      accountId: w.accountId,
      hostId: w.hostId!,
      containerId: w.observed!.containerId!,
      ...workerPorts(w.env),
      ready: false,
    };
    if (cur && cur.containerId === next.containerId && cur.hostId === next.hostId && cur.port === next.port) return;
    if (cur) this.remove(id);
    this.workers.set(id, next);
    let set = this.byEndpoint.get(next.endpointId);
    if (!set) this.byEndpoint.set(next.endpointId, (set = new Set()));
    set.add(next);
  }

  private remove(id: string): void {
    const w = this.workers.get(id);
    if (!w) return;
    this.workers.delete(id);
    this.byEndpoint.get(w.endpointId)?.delete(w);
    w.ready = false;
    for (const l of this.goneListeners) l(w);
  }
}

/** In service, and its container runs on a host (what the provisioner observed). */
function runs(p: WorkerPod): boolean {
  return inService(p) && p.status === 'RUNNING' && p.hostId !== null && typeof p.observed?.containerId === 'string';
}
