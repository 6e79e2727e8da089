// Which hosts this replica watches for GPU health (docs/gpu-health.md): every GPU host whose reconcile
// lease it holds (docs/replicas.md; all of them with the embedded store), one HostGpuWatcher each. A host
// given up, removed or left without GPUs has its watcher stopped; another replica that takes the host
// starts from the position stored with the host.
import type { Logger } from 'pino';
import type { Services } from '../core/index.ts';
import { HostGpuWatcher, type GpuWatchSettings } from './gpu-watcher.ts';
import { HostTaskLoop } from './host-task-loop.ts';

const SYNC_MS = 1_000;

export class GpuWatchLoop extends HostTaskLoop<HostGpuWatcher> {
  constructor(s: Services, settings: GpuWatchSettings, holds: (hostId: string) => boolean, logger?: Logger) {
    super({
      wanted: async () => new Set((await s.store.list('hosts')).filter((h) => h.facts.gpus.length > 0 && holds(h.id)).map((h) => h.id)),
      make: (id) => new HostGpuWatcher(s, id, settings, () => holds(id), logger),
      syncMs: SYNC_MS,
      what: 'GPU watch',
      logger,
    });
  }

  /** the watcher of a host, while this replica watches it (tests, the device check) */
  watcher(hostId: string): HostGpuWatcher | undefined {
    return this.task(hostId);
  }
}
