// A test fleet of hosts that are separate machines as far as networking goes (issue 21): each host
// is a network namespace of its own with its own dockerd (netns-engine.ts: data root, exec root,
// socket, default bridge range) and its own sshd whose sessions reach that engine (DOCKER_HOST by
// sshd's SetEnv), plugged into a data center's LAN by a veth pair. Each data center is one Linux
// bridge; the bridges live in a router namespace that routes between them, so hosts of the first
// data center share a LAN and reach the second data center's hosts only through the router. This
// machine (the control plane, the test) is on the first LAN too, with a route to the others.
//
//   root ns ── gfc… ══ cp ─┐            router ns: lan1 (10.N.1.1/24), lan2 (10.N.2.1/24), forwarding on
//   host ns eth0 ═══ h0 ───┤ lan1        host i of data center k: eth0 10.N.k.(10+i)/24, default via 10.N.k.1
//   host ns eth0 ═══ h1 ───┘
//   host ns eth0 ═══ h2 ──── lan2
//
// Engines start in parallel; the test images are saved once and loaded into each (`docker load`).
// Each host's FORWARD policy is set as asked after dockerd started (Docker sets DROP on a fresh host;
// hosts that route for other reasons have ACCEPT). dispose() removes only what the fleet made: its
// sshds, engines (their containers with them), namespaces (their links with them) and folders.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runDocker, type DockerResult, startTestHost, type FixtureGpu, type TestHost, ensureTestImage } from '../../testing/index.ts';
import { startNetnsEngine, type NetnsEngine } from './netns-engine.ts';

const execFileP = promisify(execFile);
let fleets = 0;

export type ForwardPolicy = 'DROP' | 'ACCEPT';

export interface FleetHostSpec {
  name: string;
  /** the data center's id; data centers are LANs in the order they first appear */
  dataCenterId: string;
  /** the host's FORWARD policy once its engine started (default DROP, as Docker leaves it) */
  forward?: ForwardPolicy;
  /** GPUs of the fixture nvidia-smi (and an "nvidia" runtime in the engine); none = CPU host */
  gpus?: FixtureGpu[];
}

export interface NetnsFleetOptions {
  hosts: FleetHostSpec[];
  /** images of this machine's engine loaded into every host's engine (default: the busybox test image) */
  images?: string[];
}

export interface FleetHost {
  readonly spec: FleetHostSpec;
  readonly dataCenterId: string;
  /** the host's address on its LAN (sshd listens there on port 22) */
  readonly address: string;
  /** the namespace under /var/run/netns */
  readonly netns: string;
  /** the sshd test host (enrolTestHost takes it) */
  readonly ssh: TestHost;
  readonly engine: NetnsEngine;
  /** `docker <args>` against this host's engine */
  docker(args: string[], opts?: { timeoutMs?: number; stdin?: string }): Promise<DockerResult>;
  /** runs argv in the host's namespace; answers stdout */
  inNetns(argv: string[]): Promise<string>;
  /**
   * the host goes down: sshd stopped, dockerd stopped (its containers with it), the namespace deleted
   * (its LAN link with it). What a host keeps on disk stays (the engine's data root); what is under
   * /var/run/netns and /run of the overlay is the test's to remove (overlay-world.ts), as a reboot would
   */
  powerOff(): Promise<void>;
  /** after powerOff(), the host boots: its namespace and LAN link made again, dockerd on the same data root, sshd with the same host key and a new boot id */
  powerOn(): Promise<void>;
}

export interface NetnsFleet {
  readonly hosts: FleetHost[];
  /** the router namespace (the LAN bridges and the routing between them) */
  readonly router: string;
  /** this machine's address on the first LAN */
  readonly localAddress: string;
  /** the LANs' range, 10.N.0.0/16 */
  readonly cidr: string;
  host(name: string): FleetHost;
  /** the LAN range of a data center (10.N.k.0/24) */
  lanOf(dataCenterId: string): string;
  dispose(): Promise<void>;
}

const ip = (argv: string[]) => execFileP('ip', argv);
const hex2 = (v: number) => v.toString(16).padStart(2, '0');

/** a 10.N.0.0/16 that no route of this machine touches */
async function freeRange(): Promise<number> {
  const { stdout } = await ip(['-4', 'route', 'show', 'table', 'all']);
  const { stdout: addrs } = await ip(['-4', '-o', 'addr', 'show']);
  const seen = `${stdout}\n${addrs}`;
  for (let tries = 0; tries < 200; tries++) {
    const n = 160 + Math.floor(Math.random() * 40);
    if (!seen.includes(`10.${n}.`)) return n;
  }
  throw new Error('netns fleet: no free 10.N.0.0/16 among 10.160–10.199');
}

export async function startNetnsFleet(opts: NetnsFleetOptions): Promise<NetnsFleet> {
  const id = `${process.pid}-${fleets++}`;
  const n = await freeRange();
  const dcs = [...new Set(opts.hosts.map((h) => h.dataCenterId))];
  const lan = (dc: string) => dcs.indexOf(dc) + 1;
  const router = `gfr-${id}`;
  const rootLink = `gfc${process.pid % 100000}${fleets - 1}`.slice(0, 15);
  const dir = await mkdtemp(join(tmpdir(), 'gpufleet-netns-fleet-'));
  const hosts: FleetHost[] = [];
  const disposeAll = async () => {
    await Promise.all(hosts.map(async (h) => {
      await h.ssh.dispose().catch(() => undefined);
      await h.engine.stop().catch(() => undefined);
    }));
    // the kernel frees a deleted namespace's links later; this machine's end of the LAN goes now
    await ip(['link', 'del', rootLink]).catch(() => undefined);
    await ip(['netns', 'del', router]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // the router and its LANs
    await ip(['netns', 'add', router]);
    const inRouter = (argv: string[]) => ip(['-n', router, ...argv]);
    await inRouter(['link', 'set', 'lo', 'up']);
    await execFileP('nsenter', [`--net=/var/run/netns/${router}`, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    for (const dc of dcs) {
      const k = lan(dc);
      await inRouter(['link', 'add', `lan${k}`, 'type', 'bridge']);
      await inRouter(['addr', 'add', `10.${n}.${k}.1/24`, 'dev', `lan${k}`]);
      await inRouter(['link', 'set', `lan${k}`, 'up']);
    }
    // this machine on the first LAN, with a route to the others through the router
    await ip(['link', 'add', rootLink, 'type', 'veth', 'peer', 'name', 'cp', 'netns', router]);
    await inRouter(['link', 'set', 'cp', 'master', 'lan1', 'up']);
    await ip(['addr', 'add', `10.${n}.1.254/24`, 'dev', rootLink]);
    await ip(['link', 'set', rootLink, 'up']);
    await ip(['route', 'add', `10.${n}.0.0/16`, 'via', `10.${n}.1.1`]);

    const images = opts.images ?? [await ensureTestImage()];
    const tar = join(dir, 'images.tar');
    await runDocker(['save', '-o', tar, ...images], { timeoutMs: 120_000 });

    const started = await Promise.allSettled(opts.hosts.map(async (spec, i) => {
      const k = lan(spec.dataCenterId);
      const address = `10.${n}.${k}.${10 + i}`;
      const netns = `gfh-${id}-${i}`;
      const engine = await startNetnsEngine({
        netns,
        // each engine's own ranges, as on separate machines that never clash with each other
        bip: `10.${n}.${100 + i}.1/24`,
        addressPool: `base=10.${n}.${128 + 8 * i}.0/21,size=24`,
        nvidiaRuntime: (spec.gpus?.length ?? 0) > 0,
        beforeDockerd: async (inNetns) => {
          // at a power-on, the old link may still be going with the namespace deleted at the power-off
          await inRouter(['link', 'del', `h${i}`]).catch(() => undefined);
          await inRouter(['link', 'add', `h${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
          await inRouter(['link', 'set', `h${i}`, 'master', `lan${k}`, 'up']);
          // the NIC's own MAC, the same at every power-on (the LAN's neighbour caches stay right, as with real hardware)
          await inNetns(['ip', 'link', 'set', 'eth0', 'address', `02:00:0a:${hex2(n)}:${hex2(k)}:${hex2(10 + i)}`]);
          await inNetns(['ip', 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
          await inNetns(['ip', 'link', 'set', 'eth0', 'up']);
          await inNetns(['ip', 'route', 'add', 'default', 'via', `10.${n}.${k}.1`]);
        },
      });
      const docker = (args: string[], o: { timeoutMs?: number; stdin?: string } = {}) => runDocker(args, { ...o, env: engine.env });
      try {
        await engine.inNetns(['iptables', '-w', '5', '-P', 'FORWARD', spec.forward ?? 'DROP']);
        await engine.loadImageTar(tar);
        const ssh = await startTestHost({
          name: spec.name,
          address,
          netns,
          gpus: spec.gpus,
          sessionEnv: { DOCKER_HOST: String(engine.env.DOCKER_HOST) },
          // a kernel boot id of its own, new at each power-on (a pass sees the reboot: docs/pods.md)
          bootId: true,
        });
        const host: FleetHost = {
          spec,
          dataCenterId: spec.dataCenterId,
          address,
          netns,
          ssh,
          engine,
          docker,
          inNetns: engine.inNetns,
          async powerOff() {
            await ssh.stop();
            await engine.powerOff();
          },
          async powerOn() {
            await engine.powerOn();
            await engine.inNetns(['iptables', '-w', '5', '-P', 'FORWARD', spec.forward ?? 'DROP']);
            await ssh.newBoot();
            await ssh.start();
          },
        };
        hosts.push(host);
        return host;
      } catch (e) {
        await engine.stop();
        throw e;
      }
    }));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // in the order asked
    hosts.sort((a, b) => opts.hosts.indexOf(a.spec) - opts.hosts.indexOf(b.spec));
  } catch (e) {
    await disposeAll();
    throw e;
  }
  return {
    hosts,
    router,
    localAddress: `10.${n}.1.254`,
    cidr: `10.${n}.0.0/16`,
    host(name) {
      const h = hosts.find((x) => x.spec.name === name);
      if (!h) throw new Error(`netns fleet: no host named ${name}`);
      return h;
    },
    lanOf: (dc) => `10.${n}.${lan(dc)}.0/24`,
    dispose: disposeAll,
  };
}
