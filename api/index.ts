// The control plane's public surface: build the services and the HTTP server, start and stop them.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { configWarnings, type ServerConfig } from '../core/index.ts';
import { buildServer } from './server.ts';
import { workerRelayServer } from './jobs/worker-relay-server.ts';
import type { OriginMount } from './origin-mount.ts';
import { closeServices, createServices, createTelemetry, openStore, PodTimerLoop, refusedRegistriesInUse, systemLookup, type Services } from '../core/index.ts';
import type { GpufleetError } from '../model/index.ts';

export { buildServer } from './server.ts';
export type { OriginMount, MountContext } from './origin-mount.ts';
export { createServices, type Services } from '../core/index.ts';
export { configFromEnv, type ServerConfig } from '../core/index.ts';
export { LOG_REDACT } from './logging.ts';
export type { Store, StoreTx, StoreReader } from '../store/index.ts';
export { LowdbStore } from '../store/index.ts';

export interface ControlPlane {
  app: FastifyInstance;
  services: Services;
  url: string;
  bootstrapKey: string | null;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** hooks that run beside the server (the provisioner); each returns its stop function */
  background?: ((services: Services) => Promise<() => Promise<void>>)[];
  /** served on the API's origin ahead of its routes (the load-balancing gateway, gateway/) */
  mounts?: ((services: Services) => OriginMount)[];
  /** the clock of media URL expiry and its sweeper (tests move it; docs/media.md) */
  mediaClock?: () => number;
  /** the clock of quotas, the monthly budget and the spend guard (tests move it across a month; docs/teams.md) */
  quotaClock?: () => number;
  /** the clock of the embedded job queue's deadlines (ttl, leases, timeouts, retention); tests of old data directories set it to when they were written */
  jobClock?: () => number;
}

export async function startControlPlane(config: ServerConfig, opts: StartOptions = {}): Promise<ControlPlane> {
  const log = opts.logger;
  for (const w of configWarnings(config)) log?.warn(w);
  // what the store changes on its own at start (a torn last journal record cut, modes narrowed) is
  // logged, and so is every failure it meets on its own (a journal write, a snapshot)
  // the metrics registry first: the store reports its commits to it
  const telemetry = createTelemetry(config);
  // the embedded store, or PostgreSQL with GPUFLEET_DATABASE_URL (core/store-wiring.ts)
  const store = await openStore(config, {
    observer: telemetry.store,
    ...(log
      ? { onNotice: (m: string) => log.warn(m), onError: (err: GpufleetError) => log.error({ err, code: err.code, ...err.fields }, err.message) }
      : {}),
  });
  const services = await createServices(config, store, {
    telemetry,
    ...(opts.mediaClock ? { mediaClock: opts.mediaClock } : {}),
    ...(opts.quotaClock ? { quotaClock: opts.quotaClock } : {}),
    ...(opts.jobClock ? { jobClock: opts.jobClock } : {}),
  }).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  const bootstrapKey = await services.keys.bootstrap(config.bootstrapKey);
  // after an upgrade: registries that stored pods, templates and endpoints name and the image rule now refuses
  if (log) warnRefusedRegistries(services, config, log);
  // a refused placement's per-host reasons (docs/placement.md): the 400 carries the diagnosis, the log the hosts
  if (log)
    services.placer.onPlan((_tx, plan) => {
      for (const r of plan.refusals) log.debug({ podId: r.podId, reason: r.failure.reason, constraint: r.failure.constraint, hosts: r.hosts }, 'placement refused');
    });
  const app = await buildServer({ services, logger: opts.logger ?? false, mounts: (opts.mounts ?? []).map((m) => m(services)) });
  await app.listen({ port: config.port, host: config.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  // `port: 0` asked for any free port: what derives from the port (the workers' default URL) uses the bound one
  if (port !== config.port) services.config = { ...services.config, port };
  const stops: (() => Promise<void>)[] = [];
  // workers' calls that come through their host's relay (docs/serverless.md, "Reaching the control plane")
  const relay = workerRelayServer(app, `${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
  services.workerRelay.open((hostId, connection) => relay.accept(hostId, connection));
  stops.push(async () => {
    services.workerRelay.open(null);
    relay.close();
  });
  // stop and terminate timers (GraphQL stopAfter/terminateAfter) are honoured with or without a provisioner
  const timers = new PodTimerLoop(services.store, services.pods, {
    intervalMs: config.reconcileIntervalMs,
    onError: (err, podId) => log?.warn({ err, podId }, 'a pod timer could not be carried out; trying again at the next interval'),
  });
  await timers.start();
  stops.push(() => timers.stop());
  for (const start of opts.background ?? []) stops.push(await start(services));
  return {
    app,
    services,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    bootstrapKey,
    async close() {
      for (const stop of stops.reverse()) await stop();
      await app.close();
      await closeServices(services);
      await services.store.close();
    },
  };
}
export * from './rate-limit/limiter.ts';

/**
 * Logs (warn) each registry that stored records name and tenants may no longer pull from
 * (core/images/image-policy.ts), names resolved as before a pull, so the operator can list them and allow
 * those that are theirs (GPUFLEET_ALLOWED_REGISTRIES). Beside the start: lookups may take seconds.
 */
function warnRefusedRegistries(services: Services, config: ServerConfig, log: Logger): void {
  void refusedRegistriesInUse(services.store, config.allowedRegistries ?? [], systemLookup)
    .then((found) => {
      for (const r of found)
        log.warn(
          { registry: r.registry, uses: r.usedBy.length, usedBy: r.usedBy.slice(0, 20) },
          `registry ${r.registry} is named by ${r.usedBy.length} stored record(s) (${r.usedBy.slice(0, 3).join(', ')}${r.usedBy.length > 3 ? ', …' : ''}), ` +
            `and its pulls are now refused: ${r.why}. If it is yours, allow it with GPUFLEET_ALLOWED_REGISTRIES`,
        );
    })
    .catch((err: unknown) => log.warn({ err }, 'the registries of stored records could not be checked'));
}
export { parseQuotas } from './rate-limit/limiter.ts';
