// The load-balancing gateway (docs/gateway.md), mounted on the API's origin: requests under
// `/v2/<load balancer id>/…` (and, with GPUFLEET_LB_DOMAIN, to host `<id>.<domain>`) are claimed
// before routing and sent to one of the endpoint's ready workers. Everything it knows of endpoints
// and workers comes from the store's commits (WorkerTable), and what it sees of traffic and health
// goes to the worker side (WorkerService: RequestTraffic, liveness), which scales on it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../core/index.ts';
import { Balancer } from './balancer.ts';
import { containerRoute, SshConnector, type WorkerConnector } from './connectors.ts';
import { HealthChecks, type HealthCheckOptions } from './health-checks.ts';
import { GATEWAY_PREFIX, proxyRoutes } from './proxy-routes.ts';
import { Tunnels } from './tunnel.ts';
import { workerDispatcher } from './worker-dispatcher.ts';
import { WorkerTable } from './worker-table.ts';
import type { Principal } from '../model/index.ts';
import { decodedPath } from './decoded-path.ts';

export interface GatewayOptions {
  /** how workers are reached; default: SSH channels through their hosts (SshConnector) */
  connector?: (services: Services) => WorkerConnector;
  /** how long a request waits for a ready worker before 503; default 2 min */
  holdMs?: number;
  /** time per request, to the end of the worker's answer; default 5.5 min (504 if no answer by then) */
  requestTimeoutMs?: number;
  /** request bodies up to this many bytes; default 30 MB (413 beyond) */
  maxBodyBytes?: number;
  healthChecks?: HealthCheckOptions;
}

/** Structurally api/'s OriginMount (the gateway sits beside api/, not on it). */
export interface GatewayMount {
  rewriteUrl(url: string, host: string | undefined): string | undefined;
  register(app: FastifyInstance, ctx: { principalOf(request: FastifyRequest): Principal }): Promise<void>;
}

export const DEFAULT_HOLD_MS = 120_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 330_000;
export const DEFAULT_MAX_BODY_BYTES = 30_000_000;

/** `startControlPlane(config, { mounts: [loadBalancerGateway()] })` */
export function loadBalancerGateway(opts: GatewayOptions = {}): (services: Services) => GatewayMount {
  return (services) => {
    const table = new WorkerTable(services.store);
    const connector = opts.connector?.(services) ?? new SshConnector(services.sshPool, containerRoute(services.store, services.fleet, services.sshPool));
    const dispatcher = workerDispatcher(connector, (id) => table.worker(id));
    const checks = new HealthChecks(table, dispatcher, services.workers, opts.healthChecks);
    const balancer = new Balancer(table, services.workers, opts.holdMs ?? DEFAULT_HOLD_MS);
    checks.onReady((w) => balancer.wake(w.endpointId));
    table.onGone((w) => connector.forget(w));
    const tunnels = new Tunnels();
    const domain = services.config.lbDomain ? `.${services.config.lbDomain}` : null;

    return {
      rewriteUrl(url, host) {
        if (url.startsWith('/v2/')) {
          let end = 4;
          while (end < url.length && url[end] !== '/' && url[end] !== '?') end++;
          const id = url.slice(4, end);
          if (table.isLoadBalancer(id)) return `${GATEWAY_PREFIX}/${id}${url.slice(end)}`;
        }
        if (domain && host) {
          const name = host.replace(/:\d+$/, '').toLowerCase();
          if (name.endsWith(domain)) {
            const id = name.slice(0, -domain.length);
            if (table.isLoadBalancer(id)) return `${GATEWAY_PREFIX}/${id}${url.startsWith('/') ? url : `/${url}`}`;
          }
        }
        // the gateway's own prefix is reached by rewriting only (the router decodes: `/%2Egateway…` too)
        for (const u of [url, decodedPath(url)])
          if (u === GATEWAY_PREFIX || u.startsWith(`${GATEWAY_PREFIX}/`) || u.startsWith(`${GATEWAY_PREFIX}?`)) return '/.gateway-is-not-a-route';
        return undefined;
      },

      async register(app, ctx) {
        await table.start();
        checks.start();
        await proxyRoutes(app, {
          table,
          balancer,
          dispatcher,
          workers: services.workers,
          principalOf: ctx.principalOf,
          maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
          requestTimeoutMs: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
          tunnels,
        });
        // before the server closes: it waits for every connection, and an upgraded one is no longer
        // the HTTP server's to close (forceCloseConnections does not reach it)
        app.addHook('preClose', (done) => {
          tunnels.closeAll(); // open WebSockets end with the server
          done();
        });
        app.addHook('onClose', async () => {
          checks.stop();
          table.stop();
          await dispatcher.destroy(); // open streams (SSE) end with the server
        });
      },
    };
  };
}
