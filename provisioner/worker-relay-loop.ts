// Which hosts this replica runs a worker relay on (docs/serverless.md, "The worker relay"): when the
// relay is wanted (core/config.ts workerRelayWanted: no GPUFLEET_WORKER_URL and a loopback-only
// control plane, by default), every host whose reconcile lease this replica holds and that has a
// serverless worker placed on it, and for a minute after its last one went (a worker started again
// soon finds it up). One HostWorkerRelay each; a host given up or removed has its relay stopped.
import type { Logger } from 'pino';
import { isWorker } from '../model/index.ts';
import { inService, type Services } from '../core/index.ts';
import { HostWorkerRelay } from './worker-relay.ts';
import { HostTaskLoop } from './host-task-loop.ts';

const SYNC_MS = 1_000;
const LINGER_MS = 60_000;

export class WorkerRelayLoop extends HostTaskLoop<HostWorkerRelay> {
  constructor(s: Services, holds: (hostId: string) => boolean, logger?: Logger) {
    /** when each host last had a worker */
    const lastNeeded = new Map<string, number>();
    super({
      wanted: async () => {
        const now = Date.now();
        const hosts = (await s.store.list('hosts')).filter((h) => holds(h.id)).map((h) => h.id);
        // only the held hosts' pods (by the hostId index), not every pod of the fleet each second
        for (const id of hosts) if ((await s.store.list('pods', { hostId: id })).some((p) => isWorker(p) && inService(p))) lastNeeded.set(id, now);
        for (const id of lastNeeded.keys()) if (!hosts.includes(id)) lastNeeded.delete(id);
        return new Set(hosts.filter((id) => now - (lastNeeded.get(id) ?? -Infinity) < LINGER_MS));
      },
      make: (id) => new HostWorkerRelay(s, id, logger),
      syncMs: SYNC_MS,
      what: 'worker relay',
      logger,
    });
  }
}
