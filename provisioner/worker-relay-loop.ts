// Which hosts this replica runs a worker relay on (docs/serverless.md, "Reaching the control plane"):
// when the relay is wanted (core/config.ts workerRelayWanted: no GPUFLEET_WORKER_URL and a
// loopback-only control plane, by default), every host whose reconcile lease this replica holds and
// that has a serverless worker placed on it, and for a minute after its last one went (a worker
// started again soon finds it up). One HostWorkerRelay each; a host given up or removed has its
// relay stopped.
import type { Logger } from 'pino';
import { isWorker } from '../model/index.ts';
import { inService, type Services } from '../core/index.ts';
import { HostWorkerRelay } from './worker-relay.ts';

const SYNC_MS = 1_000;
const LINGER_MS = 60_000;

export class WorkerRelayLoop {
  private readonly relays = new Map<string, HostWorkerRelay>();
  /** when each host last had a worker */
  private readonly lastNeeded = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly s: Services,
    private readonly holds: (hostId: string) => boolean,
    private readonly logger?: Logger,
  ) {}

  /** the relay of a host, while this replica runs one there (tests) */
  relay(hostId: string): HostWorkerRelay | undefined {
    return this.relays.get(hostId);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.syncing = this.sync()
        .catch((err: unknown) => this.logger?.warn({ err }, 'worker relay: could not read the hosts'))
        .finally(() => {
          this.syncing = null;
          if (!this.stopped) this.timer = setTimeout(tick, SYNC_MS);
        });
    };
    tick();
  }

  async sync(): Promise<void> {
    const now = Date.now();
    const hosts = new Set((await this.s.store.list('hosts')).filter((h) => this.holds(h.id)).map((h) => h.id));
    for (const p of await this.s.store.list('pods')) if (isWorker(p) && inService(p) && p.hostId !== null && hosts.has(p.hostId)) this.lastNeeded.set(p.hostId, now);
    const wanted = new Set([...hosts].filter((id) => now - (this.lastNeeded.get(id) ?? -Infinity) < LINGER_MS));
    for (const [id, r] of this.relays) {
      if (wanted.has(id)) continue;
      this.relays.delete(id);
      await r.stop();
    }
    for (const id of wanted) {
      if (this.relays.has(id) || this.stopped) continue;
      const r = new HostWorkerRelay(this.s, id, this.logger);
      this.relays.set(id, r);
      r.start();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.syncing;
    await Promise.all([...this.relays.values()].map((r) => r.stop()));
    this.relays.clear();
  }
}
