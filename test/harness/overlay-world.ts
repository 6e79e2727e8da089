// A namespace test fleet with a control plane and globally-networked pods on it, and the probes the
// overlay tests run between pods (issue 21): ICMP and TCP from inside the pod's container (busybox),
// UDP with overlay-probe.py run in the pod's network namespace (`nsenter -t <pid> -n`, so its packets
// leave through the pod's own interfaces).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { readdir, readFile, rm } from 'node:fs/promises';
import { DNS_ROOT, namespacePrefix, provisioner, wireguardDevice, WIREGUARD_KEY_DIR, WIREGUARD_RUN_DIR } from '../../provisioner/index.ts';
import { enrolTestHost } from '../../testing/index.ts';
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from './control-plane.ts';
import { startNetnsFleet, type FleetHost, type FleetHostSpec, type NetnsFleet } from './netns-fleet.ts';
import { waitFor } from './wait-for.ts';

const execFileP = promisify(execFile);
export const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'overlay-probe.py');
export const PYTHON = '/usr/bin/python3';
export const GPU = 'NVIDIA H100 80GB HBM3';
export const TCP_PORT = 7001;
export const UDP_PORT = 7002;
/** a TCP server answering "tcp-ok" to each connection; exits on SIGTERM so a stop is quick */
export const SERVER = `sh -c 'trap "exit 0" TERM; nc -ll -p ${TCP_PORT} -e echo tcp-ok & wait'`;

type J = Record<string, any>;
export type Api = (p: string, init?: { method?: string; json?: unknown; key?: string }) => Promise<Response>;

export interface WorldPod {
  name: string;
  id: string;
  account: string;
  ip: string | null;
}

/**
 * The account namespaces the overlay made on these hosts (`gfo-<host hash>-…` under /var/run/netns,
 * which the namespace test hosts share with this machine): removed at the end of a test, as a host's
 * reboot would.
 */
export async function removeAccountNamespaces(hostIds: string[]): Promise<void> {
  const prefixes = hostIds.map(namespacePrefix);
  const names = (await execFileP('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]!);
  for (const n of names.filter((x) => prefixes.some((p) => x.startsWith(p)))) await execFileP('ip', ['netns', 'del', n]).catch(() => undefined);
  await removeDnsState(prefixes);
}

/**
 * The internal DNS the overlay left on these hosts (`/run/gpufleet/dns/<account namespace>`, shared by
 * the namespace hosts): its resolvers (dnsmasq processes that outlive the pods' containers, keeping
 * their network namespaces) are stopped and the folders removed, as a host's reboot would.
 */
export async function removeDnsState(prefixes: string[]): Promise<void> {
  const dirs = await readdir(DNS_ROOT).catch(() => [] as string[]);
  for (const d of dirs.filter((x) => prefixes.some((p) => x.startsWith(p)))) {
    for (const f of (await readdir(path.join(DNS_ROOT, d)).catch(() => [] as string[])).filter((x) => x.endsWith('.pid'))) {
      const pid = Number((await readFile(path.join(DNS_ROOT, d, f), 'utf8').catch(() => '')).trim());
      const comm = pid > 0 ? (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() : '';
      if (comm === 'dnsmasq') process.kill(pid, 'SIGTERM');
    }
    await rm(path.join(DNS_ROOT, d), { recursive: true, force: true });
  }
}

/**
 * What the tunnel between data centers keeps on these hosts' disks (the namespace hosts share this
 * machine's): each host's WireGuard key and wireguard-go's log. A reboot keeps the key (a disk); the
 * end of a test removes it. The wireguard-go daemons went with their hosts' namespaces (netns-engine.ts).
 */
export async function removeWireguardState(hostIds: string[]): Promise<void> {
  for (const dev of hostIds.map(wireguardDevice)) {
    await rm(path.join(WIREGUARD_KEY_DIR, `${dev}.key`), { force: true });
    await rm(path.join(WIREGUARD_RUN_DIR, `${dev}.log`), { force: true });
  }
}

export interface StartedOverlayWorld {
  fleet: NetnsFleet;
  cp: TestControlPlane;
  w: OverlayWorld;
  /** a fleet host's id in the control plane, by its name */
  idOf(name: string): string;
  /** the control plane, the fleet and what the overlay left on its hosts */
  close(): Promise<void>;
}

/**
 * a namespace fleet of these hosts, each enrolled in its data center by a control plane whose provisioner
 * passes every 300 ms (`config`: more of its settings); `enrolBy` names what a host is enrolled by when
 * not its address (a name that resolves to it)
 */
export async function startOverlayWorld(
  hosts: FleetHostSpec[],
  config: TestControlPlaneOptions['config'] = {},
  opts: { enrolBy?: (h: FleetHost) => string | undefined | Promise<string | undefined> } = {},
): Promise<StartedOverlayWorld> {
  const fleet = await startNetnsFleet({ hosts });
  const ids = new Map<string, string>();
  let cp: TestControlPlane | null = null;
  const close = async () => {
    await cp?.close();
    await fleet.dispose();
    await removeAccountNamespaces([...ids.values()]);
    await removeWireguardState([...ids.values()]);
  };
  try {
    const started = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config });
    cp = started;
    const hostsById = new Map<string, FleetHost>();
    for (const h of fleet.hosts) {
      const by = await opts.enrolBy?.(h);
      const id = await enrolTestHost(started, h.ssh, { dataCenterId: h.dataCenterId, ...(by !== undefined ? { address: by } : {}) });
      hostsById.set(id, h);
      ids.set(h.spec.name, id);
    }
    const w = new OverlayWorld(fleet, (p, init = {}) => started.api(p, init), hostsById);
    return { fleet, cp: started, w, idOf: (name) => ids.get(name)!, close };
  } catch (e) {
    await close();
    throw e;
  }
}

export class OverlayWorld {
  /** UDP servers started in pods' namespaces: stopped by dispose() */
  private readonly servers: ChildProcess[] = [];

  constructor(
    readonly fleet: NetnsFleet,
    private readonly api: Api,
    /** host id → the fleet host */
    readonly hostsById: Map<string, FleetHost>,
  ) {}

  async view(p: { id: string }, key: string): Promise<J> {
    return (await (await this.api(`/v2/pods/${p.id}`, { key })).json()) as J;
  }

  async create(key: string, account: string, name: string, body: J): Promise<WorldPod> {
    const res = await this.api('/v2/pods', { method: 'POST', key, json: { name, image: body.image, args: SERVER, disk: 1, gpu: { id: GPU }, ...body } });
    const b = (await res.json()) as J;
    expect(res.status, JSON.stringify(b)).toBe(201);
    await this.running(b.id, key);
    return { name, id: b.id, account, ip: b.globalNetworking?.ip ?? null };
  }

  /** creates the pod on the fleet host named `host` (the other hosts drained meanwhile) */
  async createOn(host: string, key: string, account: string, name: string, body: J): Promise<WorldPod> {
    const others = [...this.hostsById].filter(([, h]) => h.spec.name !== host).map(([id]) => id);
    const drain = (id: string, drained: boolean) => this.api(`/v2/hosts/${id}/drain`, { method: 'POST', json: { drained } });
    for (const id of others) await drain(id, true);
    try {
      return await this.create(key, account, name, body);
    } finally {
      for (const id of others) await drain(id, false);
    }
  }

  async running(id: string, key: string): Promise<J> {
    return waitFor(`pod ${id} RUNNING`, async () => {
      const v = await this.view({ id }, key);
      if (v.status === 'ERROR') throw new Error(`pod ${id} ERROR: ${v.statusReason}`);
      return v.status === 'RUNNING' ? v : null;
    }, 60_000);
  }

  async hostOf(p: { id: string }): Promise<FleetHost> {
    for (const h of this.fleet.hosts) {
      // a host that is down has no running container
      const names = (await h.docker(['ps', '--format', '{{.Names}}']).catch(() => ({ stdout: '' }))).stdout.split('\n');
      if (names.includes(`gpufleet-${p.id}`)) return h;
    }
    throw new Error(`pod ${p.id}: no running container on any host`);
  }

  async pid(p: { id: string }): Promise<number> {
    const h = await this.hostOf(p);
    return Number((await h.docker(['inspect', '-f', '{{.State.Pid}}', `gpufleet-${p.id}`])).stdout.trim());
  }

  /** argv in the pod's container; stdout, or null when it exits non-zero */
  async exec(p: { id: string }, argv: string[], timeoutMs = 15_000): Promise<string | null> {
    const h = await this.hostOf(p);
    return h.docker(['exec', `gpufleet-${p.id}`, ...argv], { timeoutMs }).then((r) => r.stdout, () => null);
  }

  /** argv (a program of this machine) in the pod's network namespace */
  async inPod(p: { id: string }, argv: string[]): Promise<string> {
    return (await execFileP('nsenter', ['-t', String(await this.pid(p)), '-n', ...argv], { timeout: 20_000 })).stdout;
  }

  ping = async (from: { id: string }, ip: string, extra: string[] = []) => (await this.exec(from, ['ping', '-c', '1', '-W', '2', ...extra, ip])) !== null;
  tcp = async (from: { id: string }, ip: string) => ((await this.exec(from, ['sh', '-c', `nc -w 2 ${ip} ${TCP_PORT} </dev/null`])) ?? '').includes('tcp-ok');
  udp = async (from: { id: string }, ip: string) => (await this.inPod(from, [PYTHON, PROBE, 'ask', ip, String(UDP_PORT)])).trim() === 'udp-ok';
  /** a UDP datagram of `size` bytes (as an IP packet, DF set) to the pod's UDP server: "udp-ok", "timeout" or "emsgsize" */
  big = async (from: { id: string }, ip: string, size: number, marker: string) => (await this.inPod(from, [PYTHON, PROBE, 'big', ip, String(UDP_PORT), String(size), marker])).trim();
  /** an ICMP echo of `size` bytes (as an IP packet, DF set): "reply <size of the reply>", "timeout" or "emsgsize" */
  pingDf = async (from: { id: string }, ip: string, size: number) => (await this.inPod(from, [PYTHON, PROBE, 'ping-df', ip, String(size)])).trim();

  /**
   * `name` looked up inside the pod's container as its programs do (busybox nslookup, the resolver
   * of its /etc/resolv.conf; a server that does not answer is given 1 s, twice): the A addresses, and
   * whether the answer was NXDOMAIN
   */
  async lookup(p: { id: string }, name: string): Promise<{ ips: string[]; nx: boolean }> {
    const out = (await this.exec(p, ['sh', '-c', 'nslookup -type=a -timeout=1 -retry=1 "$0" 2>&1; true', name])) ?? '';
    const answers = out.split(/\nName:/).slice(1).join('\n');
    return { ips: [...answers.matchAll(/^Address:\s*(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!), nx: /NXDOMAIN/.test(out) };
  }

  /** one A query from the pod's network namespace to `server`:53: "rcode=N a=IP,…" or "timeout" */
  async dns(p: { id: string }, server: string, name: string): Promise<string> {
    return (await this.inPod(p, [PYTHON, PROBE, 'dns', server, name])).trim();
  }

  /** a UDP server in the pod's namespace that logs each datagram's source to `log` */
  async serveUdp(p: { id: string }, log: string): Promise<void> {
    const child = spawn('nsenter', ['-t', String(await this.pid(p)), '-n', PYTHON, PROBE, 'serve', String(UDP_PORT), log], { stdio: 'ignore' });
    this.servers.push(child);
    // up once it answers locally
    await waitFor(`UDP server in ${p.id}`, async () => (await this.inPod(p, [PYTHON, PROBE, 'ask', '127.0.0.1', String(UDP_PORT)])).trim() === 'udp-ok', 15_000);
  }

  /** the pod's podnet1 as `ip -o -4 addr` shows it, or null when it has none */
  async podnet1(p: { id: string }): Promise<string | null> {
    return this.exec(p, ['ip', '-o', '-4', 'addr', 'show', 'dev', 'podnet1']).then((o) => o?.trim() || null);
  }

  stopServers(): void {
    for (const c of this.servers) if (c.exitCode === null) c.kill('SIGKILL');
  }
}
