// The provisioner's public surface: start the reconcile loop beside the control plane.
import type { Logger } from 'pino';
import type { Services } from '../core/index.ts';
import { Reconciler } from './reconciler.ts';

export { Reconciler } from './reconciler.ts';
export { runSpec, splitArgs, containerName } from './container-spec.ts';

export function provisioner(opts: { logger?: Logger } = {}) {
  return async (services: Services): Promise<() => Promise<void>> => {
    const r = new Reconciler(services, { intervalMs: services.config.reconcileIntervalMs, metricsIntervalMs: services.config.metricsIntervalMs, ...(opts.logger ? { logger: opts.logger } : {}) });
    r.start();
    return async () => {
      await r.stop();
      await services.sshPool.closeAll();
    };
  };
}
