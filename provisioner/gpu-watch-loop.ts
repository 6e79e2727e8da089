// Which hosts this replica watches for GPU health (docs/gpu-health.md): every GPU host whose reconcile
// lease it holds (docs/replicas.md; all of them with the embedded store), one HostGpuWatcher each. A host
// given up, removed or left without GPUs has its watcher stopped; another replica that takes the host
// starts from the position stored with the host.
import type { Logger } from 'pino';
import type { Services } from '../core/index.ts';
import { HostGpuWatcher, type GpuWatchSettings } from './gpu-watcher.ts';

const SYNC_MS = 1_000;

export class GpuWatchLoop {
  private readonly watchers = new Map<string, HostGpuWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly s: Services,
    private readonly settings: GpuWatchSettings,
    private readonly holds: (hostId: string) => boolean,
    private readonly logger?: Logger,
  ) {}

  /** the watcher of a host, while this replica watches it (tests, the device check) */
  watcher(hostId: string): HostGpuWatcher | undefined {
    return this.watchers.get(hostId);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.syncing = this.sync()
        .catch((err: unknown) => this.logger?.warn({ err }, 'GPU watch: could not read the hosts'))
        .finally(() => {
          this.syncing = null;
          if (!this.stopped) this.timer = setTimeout(tick, SYNC_MS);
        });
    };
    tick();
  }

  async sync(): Promise<void> {
    const hosts = await this.s.store.list('hosts');
    const wanted = new Set(hosts.filter((h) => h.facts.gpus.length > 0 && this.holds(h.id)).map((h) => h.id));
    for (const [id, w] of this.watchers) {
      if (wanted.has(id)) continue;
      this.watchers.delete(id);
      await w.stop();
    }
    for (const id of wanted) {
      if (this.watchers.has(id) || this.stopped) continue;
      const w = new HostGpuWatcher(this.s, id, this.settings, () => this.holds(id), this.logger);
      this.watchers.set(id, w);
      w.start();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.syncing;
    await Promise.all([...this.watchers.values()].map((w) => w.stop()));
    this.watchers.clear();
  }
}
