// The provisioner's public surface: start the reconcile loop beside the control plane.
import type { Logger } from 'pino';
import { Autoscaler, type Services, workerRelayWanted } from '../core/index.ts';
import { Reconciler } from './reconciler.ts';
import type { PullSettings } from './pull-scheduler.ts';
import { ContainerLogs } from './container-logs.ts';
import { ContainerExecs } from './container-exec.ts';
import { decommissionHost } from './host-decommission.ts';
import { GpuWatchLoop } from './gpu-watch-loop.ts';
import { WorkerRelayLoop } from './worker-relay-loop.ts';
import type { GpuWatchSettings } from './gpu-watcher.ts';

export { Reconciler } from './reconciler.ts';
export { GpuWatchLoop } from './gpu-watch-loop.ts';
export { WorkerRelayLoop } from './worker-relay-loop.ts';
export { HostWorkerRelay, type RelayState } from './worker-relay.ts';
export { HostGpuWatcher, type GpuWatchSettings } from './gpu-watcher.ts';
export { runSpec, splitArgs, containerName, END_OF_OPTIONS, type RunSpec } from './container-spec.ts';
export { accountNamespace, namespacePrefix, vtepMac, vxlanDevice, wireguardDevice } from './overlay/overlay-plan.ts';
export { RULE_FROM_VXLAN, RULE_TO_VXLAN, TUNNEL_GUARD_CHAIN, TUNNEL_TABLE, WIREGUARD_KEY_DIR, WIREGUARD_RUN_DIR } from './overlay/overlay-wireguard.ts';
export { DNS_ADDRESS, DNS_ROOT } from './overlay/overlay-dns.ts';

export interface ProvisionerOptions {
  logger?: Logger;
  /** how long an account's network stays on a host after its last pod there; default 10 min (tenant-network-gc.ts) */
  networkLingerMs?: number;
}

/** The pull settings the operator set (the rest are pull-scheduler.ts's defaults). */
function pullSettings(c: Services['config']): Partial<PullSettings> {
  const positive = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined);
  const out: Partial<PullSettings> = {};
  const perHost = positive(c.pullsPerHost);
  const perAccount = positive(c.pullsPerAccount);
  const stallMs = positive(c.pullStallMs);
  if (perHost) out.perHost = Math.floor(perHost);
  if (perAccount) out.perAccount = Math.floor(perAccount);
  if (stallMs) out.stallMs = stallMs;
  return out;
}

/** The GPU watch settings the operator set, whole seconds of at least 1. */
export function gpuWatchSettings(c: Services['config']): GpuWatchSettings {
  const secs = (n: number | undefined, d: number) => (n !== undefined && Number.isFinite(n) && n >= 1 ? Math.floor(n) : d);
  return { pollSeconds: secs(c.gpuPollSeconds, 5), smiTimeoutSeconds: secs(c.gpuSmiTimeoutSeconds, 10), positionWriteMs: 30_000 };
}

export function provisioner(opts: ProvisionerOptions = {}) {
  return async (services: Services): Promise<() => Promise<void>> => {
    // serverless workers are pods to the reconciler; the autoscaler decides how many (docs/serverless.md)
    const queue = services.workers.jobQueue;
    const scaler = queue ? new Autoscaler(services.workers, services.store, queue, opts.logger ? { logger: opts.logger } : {}) : null;
    if (!queue) opts.logger?.warn('no job queue attached to the worker service: serverless endpoints get no workers');
    let closing = false;
    const r = new Reconciler(services, {
      intervalMs: services.config.reconcileIntervalMs,
      metricsIntervalMs: services.config.metricsIntervalMs,
      observer: services.telemetry.provisioner,
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.networkLingerMs !== undefined ? { networkLingerMs: opts.networkLingerMs } : {}),
      pulls: pullSettings(services.config),
      ...(services.config.overlayVerifyMs !== undefined ? { overlayVerifyMs: services.config.overlayVerifyMs } : {}),
      // with several replicas the autoscaler runs on one of them, the leader (docs/replicas.md)
      onLeader: (leader) => {
        if (!scaler || closing) return;
        if (leader) scaler.start();
        else void scaler.stop();
      },
    });
    r.start();
    // GPU health (docs/gpu-health.md): the hosts this replica reconciles are the hosts it watches
    const gpuWatch = services.config.gpuWatch === false ? null : new GpuWatchLoop(services, gpuWatchSettings(services.config), (id) => r.leases.holds(id), opts.logger);
    gpuWatch?.start();
    // serverless workers reach a loopback-only control plane through their host's SSH connection (docs/serverless.md)
    const relays = workerRelayWanted(services.config) ? new WorkerRelayLoop(services, (id) => r.leases.holds(id), opts.logger) : null;
    relays?.start();
    services.readiness.set('provisioner', () => (r.isRunning ? null : 'the reconcile loop is stopped'));
    // pod logs are read on the hosts by the process that reaches them
    services.podLogs.useSource(new ContainerLogs(services));
    services.podExec.useRunner(new ContainerExecs(services));
    // a removed host's containers and account networks go with it
    services.fleet.useDecommission((host, target) => decommissionHost(services.sshPool, host, target));
    if (!services.hostLeases.shared) scaler?.start();
    return async () => {
      closing = true;
      services.podLogs.useSource(null);
      services.podExec.useRunner(null);
      services.fleet.useDecommission(null);
      await scaler?.stop();
      await gpuWatch?.stop();
      await relays?.stop();
      await r.stop();
      await services.sshPool.closeAll();
    };
  };
}
