// A load-balancing endpoint whose workers are in-process HTTP servers (worker-handlers/lb-test-server.ts)
// on 127.0.0.1, behind a real control plane with the gateway mounted: for tests of the gateway's own
// rules and for bench/gateway.ts. The worker records are written into the store as the provisioner
// would once their containers run (a fake host, no provisioner); the gateway reaches them by plain
// TCP, or through a real sshd test host's SSH connection (`ssh`), as it reaches containers.
import { loadBalancerGateway, SshConnector, TcpConnector, type GatewayOptions, type WorkerConnector } from '../../gateway/index.ts';
import { isWorker } from '../../model/index.ts';
import type { ServerConfig, Services } from '../../core/index.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane.ts';
import { seedHosts } from './fake-hosts.ts';
import type { TestHost } from '../../testing/index.ts';
import type { Server } from 'node:http';
import { startLbTestServer } from './worker-handlers/lb-test-server.ts';

export interface LocalLbWorld {
  cp: TestControlPlane;
  key: string;
  accountId: string;
  endpointId: string;
  /** the worker records' ids, one per local server, in order */
  workerIds: string[];
  /** each local worker's own URL (what the gateway forwards to), in order; worker i answers x-worker: local-<i> */
  direct: string[];
  /** the in-process workers' HTTP servers, in order (none with `workerPorts`): a test may add routes, an 'upgrade' handler */
  servers: Server[];
  close(): Promise<void>;
}

export interface LocalLbOptions {
  workers?: number;
  /** env of the local workers (GPUFLEET_TEST_INIT_MS, GPUFLEET_TEST_NEVER_READY) */
  workerEnv?: NodeJS.ProcessEnv;
  gateway?: Omit<GatewayOptions, 'connector'>;
  /** reach the workers through this test host's SSH connection (forwarded channels to 127.0.0.1) */
  ssh?: TestHost;
  /** workers already listening on these 127.0.0.1 ports (another process), instead of in-process ones */
  workerPorts?: number[];
  /** rate limits of the control plane (GPUFLEET_RATE_LIMITS) */
  rateLimits?: string;
  /** settings of the control plane (lbDomain, …) */
  config?: Partial<ServerConfig>;
}

export async function startLocalLbWorld(opts: LocalLbOptions = {}): Promise<LocalLbWorld> {
  // each local worker names itself `local-<i>` in its answers (x-worker); or workers run elsewhere
  const servers = opts.workerPorts
    ? opts.workerPorts.map((port) => ({ port, close: async () => undefined }))
    : await Promise.all(Array.from({ length: opts.workers ?? 1 }, (_, i) => startLbTestServer({ env: { ...opts.workerEnv, RUNPOD_POD_ID: `local-${i}` } })));
  const ssh = opts.ssh;
  const connector = (s: Services): WorkerConnector =>
    ssh
      ? new SshConnector(s.sshPool, async () => ({
          target: { hostId: `ssh-${ssh.name}`, address: ssh.address, port: ssh.port, user: ssh.user, privateKey: ssh.privateKey, pinnedFingerprint: ssh.hostKeyFingerprint },
          address: '127.0.0.1',
        }))
      : new TcpConnector(() => '127.0.0.1');
  const cp = await startTestControlPlane({ mounts: [loadBalancerGateway({ healthChecks: { intervalMs: 200 }, ...opts.gateway, connector })], ...(opts.config ? { config: opts.config } : {}), ...(opts.rateLimits ? { rateLimits: opts.rateLimits } : {}) });
  try {
    const dc = `dc-lb-local-${process.pid}`;
    await seedHosts(cp.services.store, [{ gpus: 8, dataCenterId: dc }]);
    const { accountId, key } = await cp.newAccount('read_write', 1000);
    const principal = { accountId, keyId: 'test', scope: 'read_write' as const, operator: false };
    const tpl = await cp.services.templates.create(principal, { name: `lb-local-${Date.now()}`, image: 'local', disk: 1, serverless: true });
    const ep = await cp.services.endpoints.create(principal, {
      templateId: tpl.id,
      name: 'lb-local',
      type: 'LOAD_BALANCER',
      gpuTypeIds: ['NVIDIA H100 80GB HBM3'],
      workersMin: 0,
      workersMax: servers.length,
      dataCenterIds: [dc],
    });
    await cp.services.workers.create(ep, servers.length);
    const pods = (await cp.services.store.list('pods', { endpointId: ep.id })).filter(isWorker);
    const now = new Date().toISOString();
    // what the provisioner writes once a container runs; each worker's PORT is its local server's
    await cp.services.store.transact(async (tx) => {
      pods.forEach((p, i) => {
        tx.put('pods', {
          ...p,
          env: { ...p.env, PORT: String(servers[i]!.port) },
          status: 'RUNNING',
          statusReason: null,
          startedAt: now,
          observed: { containerId: `local-${p.id}`, containerStartedAt: now, ports: [], gpus: [], cpuUtil: null, memoryUtil: null, observedAt: now },
        });
      });
    });
    return {
      cp,
      key,
      accountId,
      endpointId: ep.id,
      workerIds: pods.map((p) => p.id),
      direct: servers.map((s) => `http://127.0.0.1:${s.port}`),
      servers: servers.flatMap((s) => ('server' in s ? [s.server] : [])),
      async close() {
        await cp.close();
        await Promise.all(servers.map((s) => s.close()));
      },
    };
  } catch (e) {
    await cp.close();
    await Promise.all(servers.map((s) => s.close()));
    throw e;
  }
}
