// startTestFleet: a whole gpufleet on this machine for a test, the way Temporal ships its test
// environment. A real control plane in this process (the provisioner, the autoscaler, the gateway
// and pod-port proxy, as `gpufleet serve` runs them), and real sshd test hosts (docs/testing.md)
// enrolled in it: each its own loopback address, its own keys, a fixture `nvidia-smi` reporting the
// GPUs asked for, all driving this machine's Docker engine. Pods and serverless workers become real
// containers. close() removes all of it: containers, networks, hosts, the data directory.
import { loadBalancerGateway, podPortProxy } from '../gateway/index.ts';
import { provisioner } from '../provisioner/index.ts';
import { dockerBridgeGateway } from './bridge-gateway.ts';
import { startLocalControlPlane, type LocalControlPlane, type LocalControlPlaneOptions } from './control-plane.ts';
import { disposeHostWorld, enrolTestHost } from './host-world.ts';
import { FIXTURE_GPUS, type FixtureGpu } from './nvidia-smi-fixture.ts';
import { startTestHost, type StartTestHostOptions, type TestHost } from './test-host.ts';

export interface TestFleetOptions {
  /** how many test hosts (default 1), each with `gpus`; or each host's own options */
  hosts?: number | Partial<StartTestHostOptions>[];
  /** the GPUs of every host when `hosts` is a number (default: one H100 80GB); [] makes CPU hosts */
  gpus?: FixtureGpu[];
  /** the data center every host is enrolled in (default "dc-test-1") */
  dataCenterId?: string;
  /**
   * listen where containers on the test hosts reach the control plane (the Docker bridge's gateway),
   * so serverless workers can call it; default false: loopback only, enough for pods
   */
  serverless?: boolean;
  /** the control plane's settings (data directory, admin key, reconcile interval, …) */
  controlPlane?: LocalControlPlaneOptions;
}

export interface TestFleetHost extends TestHost {
  /** the host's id in the control plane (`GET /v2/hosts/{id}`, pods' `machineId`) */
  readonly id: string;
}

export interface TestFleet {
  /** the control plane's URL: the REST API (/v1, /v2), GraphQL, the job interface */
  url: string;
  /** `admin`: the operator's key; `user`: a read/write key of an account of its own with $100 of credit */
  keys: { admin: string; user: string };
  /** the enrolled test hosts, in the order asked for */
  hosts: TestFleetHost[];
  /** the control plane itself: `api(path, {key, json})`, `newAccount()`, its services */
  controlPlane: LocalControlPlane;
  /** stops the control plane, removes every container and network it made on the hosts, stops the hosts */
  close(): Promise<void>;
}

/** the id a started host was enrolled under ('' when it never was) */
const idOf = (host: TestHost): string => (host as Partial<TestFleetHost>).id ?? '';

const DEFAULT_GPUS: FixtureGpu[] = [FIXTURE_GPUS.H100_80GB_HBM3];
let fleets = 0;

export async function startTestFleet(opts: TestFleetOptions = {}): Promise<TestFleet> {
  const specs: Partial<StartTestHostOptions>[] = typeof opts.hosts === 'object' ? opts.hosts : Array.from({ length: opts.hosts ?? 1 }, () => ({}));
  const fleet = `fleet${process.pid}-${++fleets}`;
  const hosts: TestFleetHost[] = [];
  const started: TestHost[] = [];
  let cp: LocalControlPlane | null = null;
  try {
    for (const [i, spec] of specs.entries()) started.push(await startTestHost({ gpus: opts.gpus ?? DEFAULT_GPUS, ...spec, name: spec.name ?? `${fleet}-host${i}` }));
    cp = await startLocalControlPlane({
      ...(opts.serverless ? { host: await dockerBridgeGateway() } : {}),
      background: [provisioner()],
      mounts: [podPortProxy(), loadBalancerGateway()],
      ...opts.controlPlane,
      config: { reconcileIntervalMs: 500, ...opts.controlPlane?.config },
    });
    for (const host of started) {
      const id = await enrolTestHost(cp, host, { dataCenterId: opts.dataCenterId ?? 'dc-test-1' });
      hosts.push(Object.assign(host, { id }));
    }
    const user = await cp.newAccount('read_write');
    const plane = cp;
    return {
      url: plane.url,
      keys: { admin: plane.adminKey, user: user.key },
      hosts,
      controlPlane: plane,
      async close() {
        await plane.close();
        for (const host of started) await disposeHostWorld({ host, hostId: idOf(host) });
      },
    };
  } catch (e) {
    await cp?.close().catch(() => undefined);
    for (const host of started) await disposeHostWorld({ host, hostId: idOf(host) }).catch(() => undefined);
    throw e;
  }
}
