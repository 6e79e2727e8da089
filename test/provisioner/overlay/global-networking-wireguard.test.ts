// The overlay between data centers (issue 21; docs/networking.md, "Between data centers" and "MTU"):
// three namespace test hosts, e1 and e2 in DC-E, x1 in DC-X behind the fleet's router, x1 with strict
// reverse-path filtering (rp_filter=1); two accounts; a control plane run as its own process so it can
// be SIGKILLed. Checked:
//   - podnet1's MTU is the fleet's: 1500 − 50 (VXLAN) − 80 (WireGuard, two data centers) = 1370; each host
//     reported its underlay MTU and the public half of a key it made itself (the private one is on the
//     host, mode 600, and nowhere in the control plane's answer);
//   - pods of one account reach each other across data centers (ICMP, TCP, UDP), a full-MTU packet
//     with DF set arrives both ways and one byte more is refused in the pod (EMSGSIZE), never lost;
//   - on the router between the data centers, iptables counters see between the hosts only UDP 51820
//     (none to 4789) and never a payload marker the pods sent (a control shows the marker counter counts);
//     within DC-E the VXLAN goes directly, unencrypted (the marker is counted leaving e1 for e2);
//   - the other account's pods never reach across; plaintext VXLAN sent to e1 from the router with x1's
//     address (another data center) is dropped, the same packet with e2's (same data center) arrives;
//   - e1's WireGuard device gone (wireguard-go killed): the router sees no VXLAN and no marker from the
//     pods' traffic to x1 (dropped by the fail-closed route), then the next pass makes the tunnel again;
//   - control plane SIGKILL: cross-DC traffic keeps flowing, and its restart (after ≥ 3 passes a host on
//     average, read on /metrics) makes no tunnel again;
//   - x1 rebooted (namespace, engine, wireguard-go and /run gone): its pods started again reach DC-E
//     through a tunnel the reconcile pass made again, with the same key.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { accountNamespace, vtepMac, vxlanDevice, wireguardDevice, WIREGUARD_KEY_DIR } from '../../../provisioner/index.ts';
import { enrolTestHost, FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import { freePort, spawnControlPlane, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { startNetnsFleet, type FleetHost, type NetnsFleet } from '../../harness/netns-fleet.ts';
import { OverlayWorld, PROBE, PYTHON, removeAccountNamespaces, removeWireguardState, UDP_PORT, type WorldPod } from '../../harness/overlay-world.ts';
import { waitFor } from '../../harness/wait-for.ts';

const execFileP = promisify(execFile);
const H = FIXTURE_GPUS.H100_80GB_HBM3;
const MTU = 1500 - 50 - 80;
const MARKER = 'gpufleet-plaintext-marker-7f3a';
type J = Record<string, any>;

let fleet: NetnsFleet;
let cp: SpawnedControlPlane | null = null;
let dataDir: string;
let logDir: string;
let port: number;
let w: OverlayWorld;
const ids = new Map<string, string>();
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let ae1: WorldPod;
let ae2: WorldPod;
let ax1: WorldPod;
let be1: WorldPod;
let bx1: WorldPod;

const start = async () =>
  (cp = await spawnControlPlane({ dataDir, port, startTimeoutMs: 120_000, env: { GPUFLEET_RECONCILE_INTERVAL_MS: '300', GPUFLEET_LOG_LEVEL: 'warn' } }));
const api = (p: string, init: { method?: string; json?: unknown; key?: string } = {}) =>
  fetch(cp!.url + p, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.key ?? cp!.adminKey}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
const json = async (p: string, init: Parameters<typeof api>[1] = {}) => (await (await api(p, init)).json()) as J;
async function newAccount(name: string): Promise<{ accountId: string; key: string }> {
  const account = await json('/v2/accounts', { method: 'POST', json: { email: `${name}-${Date.now()}@test.local`, name, balance: 1000 } });
  const key = await json('/v2/keys', { method: 'POST', json: { name: 'test', scope: 'read_write', accountId: account.id } });
  return { accountId: account.id, key: key.key };
}
const strictRpFilter = (h: FleetHost) => h.inNetns(['sysctl', '-qw', 'net.ipv4.conf.all.rp_filter=1', 'net.ipv4.conf.default.rp_filter=1', 'net.ipv4.conf.eth0.rp_filter=1']);

/**
 * counting rules in the router's FORWARD chain, between every pair of hosts of different data centers:
 * all packets, WireGuard's, VXLAN's, and those carrying the marker (the router's netfilter sees its LAN
 * bridges' traffic too, so the pairs keep one data center's own traffic out of the counts)
 */
async function countOnRouter(): Promise<void> {
  const inRouter = (argv: string[]) => execFileP('nsenter', [`--net=/var/run/netns/${fleet.router}`, 'iptables', '-w', '5', ...argv]);
  await inRouter(['-N', 'GFTEST-COUNT']);
  await inRouter(['-I', 'FORWARD', '1', '-j', 'GFTEST-COUNT']);
  const dcE = ['e1', 'e2'].map((n) => fleet.host(n).address);
  const dcX = [fleet.host('x1').address];
  for (const [s, d] of [...dcE.flatMap((e) => dcX.map((x) => [e, x])), ...dcX.flatMap((x) => dcE.map((e) => [x, e]))]) {
    await inRouter(['-A', 'GFTEST-COUNT', '-s', s!, '-d', d!, '-m', 'comment', '--comment', 'all']);
    await inRouter(['-A', 'GFTEST-COUNT', '-s', s!, '-d', d!, '-p', 'udp', '--sport', '51820', '--dport', '51820', '-m', 'comment', '--comment', 'wireguard']);
    await inRouter(['-A', 'GFTEST-COUNT', '-s', s!, '-d', d!, '-p', 'udp', '--dport', '4789', '-m', 'comment', '--comment', 'vxlan']);
    await inRouter(['-A', 'GFTEST-COUNT', '-s', s!, '-d', d!, '-m', 'string', '--string', MARKER, '--algo', 'bm', '-m', 'comment', '--comment', 'marker']);
  }
}
/** the router's counters (packets) by name, summed; `zero` resets them after reading */
async function routerCounts(zero = false): Promise<Record<'all' | 'wireguard' | 'vxlan' | 'marker', number>> {
  const ns = `--net=/var/run/netns/${fleet.router}`;
  const out = (await execFileP('nsenter', [ns, 'iptables-save', '-c', '-t', 'filter'])).stdout;
  const got = { all: 0, wireguard: 0, vxlan: 0, marker: 0 };
  for (const m of out.matchAll(/^\[(\d+):\d+\] -A GFTEST-COUNT .*--comment (\w+)/gm)) got[m[2] as keyof typeof got] += Number(m[1]);
  if (zero) await execFileP('nsenter', [ns, 'iptables', '-w', '5', '-Z', 'GFTEST-COUNT']);
  return got;
}
/** packets counted by an OUTPUT rule in a host's namespace (made on first use) */
async function hostCounter(h: FleetHost, rule: string[]): Promise<number> {
  const spec = ['OUTPUT', ...rule, '-m', 'comment', '--comment', 'gftest'];
  await h.inNetns(['iptables', '-w', '5', '-C', ...spec]).catch(() => h.inNetns(['iptables', '-w', '5', '-I', ...spec]));
  const out = await h.inNetns(['iptables', '-w', '5', '-L', 'OUTPUT', '-v', '-n', '-x']);
  return out.split('\n').filter((l) => l.includes('gftest')).reduce((n, l) => n + Number(l.trim().split(/\s+/)[0]), 0);
}
/** the WireGuard device's interface index on a host, or null */
const tunnelIndex = async (name: string) =>
  (await fleet.host(name).inNetns(['ip', '-o', 'link', 'show', wireguardDevice(ids.get(name)!)]).catch(() => '')).split(':')[0] || null;
const reachAll = async (from: WorldPod, to: WorldPod) =>
  (await w.ping(from, to.ip!)) && (await w.tcp(from, to.ip!)) && (await w.udp(from, to.ip!));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-overlay-wg-'));
  logDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-overlay-wg-log-'));
  port = await freePort();
  fleet = await startNetnsFleet({
    hosts: [
      { name: 'e1', dataCenterId: 'DC-E', gpus: [H, H] },
      { name: 'e2', dataCenterId: 'DC-E', forward: 'ACCEPT', gpus: [H] },
      { name: 'x1', dataCenterId: 'DC-X', gpus: [H, H] },
    ],
  });
  await strictRpFilter(fleet.host('x1'));
  await countOnRouter();
  await start();
  const hostsById = new Map<string, FleetHost>();
  for (const h of fleet.hosts) {
    const id = await enrolTestHost(cp!, h.ssh, { dataCenterId: h.dataCenterId });
    hostsById.set(id, h);
    ids.set(h.spec.name, id);
  }
  w = new OverlayWorld(fleet, api, hostsById);
  alice = await newAccount('alice');
  bob = await newAccount('bob');
  const body = { image: TEST_IMAGE, globalNetworking: true };
  ae1 = await w.createOn('e1', alice.key, 'alice', 'a-e1', body);
  ae2 = await w.createOn('e2', alice.key, 'alice', 'a-e2', body);
  ax1 = await w.createOn('x1', alice.key, 'alice', 'a-x1', body);
  be1 = await w.createOn('e1', bob.key, 'bob', 'b-e1', body);
  bx1 = await w.createOn('x1', bob.key, 'bob', 'b-x1', body);
  for (const p of [ae1, ae2, ax1, be1, bx1]) {
    await waitFor(`podnet1 in ${p.name}`, async () => (await w.podnet1(p)) !== null, 30_000);
    await w.serveUdp(p, path.join(logDir, `${p.name}.udp`));
  }
  // the tunnel needs both ends' keys: the first pass on each host makes its key, the next ones configure the peers
  await waitFor('a-e1 reaches a-x1 across the data centers', async () => w.ping(ae1, ax1.ip!), 30_000);
}, 300_000);

afterAll(async () => {
  w?.stopServers();
  await cp?.kill('SIGKILL');
  await fleet?.dispose();
  await removeAccountNamespaces([...ids.values()]);
  await removeWireguardState([...ids.values()]);
  for (const d of [dataDir, logDir]) if (d) await rm(d, { recursive: true, force: true });
}, 120_000);

describe('WireGuard between data centers', () => {
  test("podnet1's MTU is 1370 on every host; each host reported its underlay MTU and the public half of a key made on it", async () => {
    for (const p of [ae1, ae2, ax1, be1, bx1]) expect(await w.exec(p, ['cat', '/sys/class/net/podnet1/mtu'])).toBe(`${MTU}\n`);
    const hosts = (await json('/v2/hosts')).hosts as J[];
    for (const [name, id] of ids) {
      const view = hosts.find((h) => h.id === id)!;
      const dev = wireguardDevice(id);
      const keyFile = path.join(WIREGUARD_KEY_DIR, `${dev}.key`);
      const publicKey = (await fleet.host(name).inNetns(['wg', 'show', dev, 'public-key'])).trim();
      expect(view.overlay).toEqual({ underlayMtu: 1500, wireguardPublicKey: publicKey });
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const privateKey = (await readFile(keyFile, 'utf8')).trim();
      expect(privateKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(JSON.stringify(hosts)).not.toContain(privateKey);
      // the peers: the other data center's hosts, each at its address:51820, allowed its address alone
      const peers = (await fleet.host(name).inNetns(['wg', 'show', dev, 'endpoints'])).trim().split('\n').map((l) => l.split('\t')[1]).sort();
      const others = fleet.hosts.filter((h) => h.dataCenterId !== fleet.host(name).dataCenterId).map((h) => `${h.address}:51820`).sort();
      expect(peers).toEqual(others);
    }
  });

  test('across data centers pods of one account reach each other (ICMP, TCP, UDP); a full-MTU packet with DF set arrives both ways, one byte more is refused in the pod', async () => {
    for (const [from, to] of [[ae1, ax1], [ax1, ae1], [ae2, ax1], [ax1, ae2], [be1, bx1], [bx1, be1]] as const)
      expect({ pair: `${from.name} → ${to.name}`, reached: await reachAll(from, to) }).toEqual({ pair: `${from.name} → ${to.name}`, reached: true });
    for (const [from, to] of [[ae1, ax1], [ax1, ae2], [ae1, ae2]] as const) {
      expect(await w.pingDf(from, to.ip!, MTU)).toBe(`reply ${MTU}`);
      expect(await w.big(from, to.ip!, MTU, MARKER)).toBe('udp-ok');
      expect(await w.big(from, to.ip!, MTU + 1, MARKER)).toBe('emsgsize');
    }
  }, 120_000);

  test('between the data centers the router sees only UDP 51820 from host to host: no VXLAN, never the payload; within DC-E VXLAN goes directly, in the clear', async () => {
    const [e1, e2, x1] = ['e1', 'e2', 'x1'].map((n) => fleet.host(n));
    await routerCounts(true);
    // a control: the marker in the clear from a DC-E host to x1 is counted on the router (and x1's ICMP error quoting it)
    await e1!.inNetns([PYTHON, '-c', `import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'${MARKER}', ('${x1!.address}', 9))`]);
    expect((await routerCounts(true)).marker).toBeGreaterThan(0);

    const e2Marked = await hostCounter(e1!, ['-d', e2!.address, '-p', 'udp', '--dport', '4789', '-m', 'string', '--string', MARKER, '--algo', 'bm']);
    for (const [from, to] of [[ae1, ax1], [ax1, ae1], [ae2, ax1], [bx1, be1]] as const) {
      expect(await w.big(from, to.ip!, MTU, MARKER)).toBe('udp-ok');
      expect(await w.exec(from, ['sh', '-c', `echo ${MARKER} | nc -w 2 ${to.ip} 7001`])).toContain('tcp-ok');
    }
    expect(await w.big(ae1, ae2.ip!, MTU, MARKER)).toBe('udp-ok');
    const seen = await routerCounts();
    expect(seen.wireguard).toBeGreaterThan(8);
    expect(seen).toEqual({ all: seen.wireguard, wireguard: seen.wireguard, vxlan: 0, marker: 0 });
    // e1 → e2 (one data center): VXLAN to e2's address over the LAN with the marker readable
    expect(await hostCounter(e1!, ['-d', e2!.address, '-p', 'udp', '--dport', '4789', '-m', 'string', '--string', MARKER, '--algo', 'bm'])).toBeGreaterThan(e2Marked);
    // the routes VXLAN takes from e1: to e2 the LAN, to x1 the tunnel
    expect(await e1!.inNetns(['ip', 'route', 'get', e2!.address, 'ipproto', 'udp', 'dport', '4789'])).toContain('dev eth0');
    expect(await e1!.inNetns(['ip', 'route', 'get', x1!.address, 'ipproto', 'udp', 'dport', '4789'])).toContain(`dev ${wireguardDevice(ids.get('e1')!)}`);
    // and the tunnel's own packets take the LAN (no loop)
    expect(await e1!.inNetns(['ip', 'route', 'get', x1!.address, 'ipproto', 'udp', 'dport', '51820'])).toContain('dev eth0');
  }, 120_000);

  test("the other account never reaches across; VXLAN sent in the clear from another data center's host is dropped, from the same data center's it arrives", async () => {
    const pairs = [[bx1, ae1], [bx1, ae2], [ae1, bx1], [ax1, be1], [be1, ax1]] as const;
    const reached = await Promise.all(pairs.map(async ([from, to]) => [await w.ping(from, to.ip!), await w.tcp(from, to.ip!), await w.udp(from, to.ip!)]));
    expect(reached.flat().every((r) => r === false)).toBe(true);

    // a VXLAN frame for a-e1 in alice's VNI, sent to e1:4789 in the clear from the router (on the path
    // between the data centers) claiming to come from x1, then from e2
    const e1ns = `--net=/var/run/netns/${accountNamespace(ids.get('e1')!, alice.accountId)}`;
    const vni = (await execFileP('nsenter', [e1ns, 'ip', '-d', 'link', 'show', vxlanDevice(ids.get('e1')!, alice.accountId)])).stdout.match(/vxlan id (\d+)/)![1]!;
    const mac = vtepMac(ids.get('e1')!, alice.accountId);
    const log = path.join(logDir, `${ae1.name}.udp`);
    await writeFile(log, '');
    const inject = (h: FleetHost, src: string) =>
      execFileP('nsenter', [`--net=/var/run/netns/${fleet.router}`, PYTHON, PROBE, 'vxlan-raw', h.address, fleet.host('e1').address, vni, mac, src, ae1.ip!, String(UDP_PORT)]);
    await inject(fleet.host('x1'), ax1.ip!);
    await inject(fleet.host('e2'), ae2.ip!);
    await waitFor('the same data center\'s frame', async () => (await readFile(log, 'utf8')).includes(`vxlan-from-${ae2.ip}`), 5_000);
    expect(await readFile(log, 'utf8')).not.toContain(`vxlan-from-${ax1.ip}`);
  }, 120_000);

  test("e1's WireGuard device gone (wireguard-go killed): VXLAN to the other data center is dropped, never sent in the clear; the next pass brings the tunnel back", async () => {
    const e1 = fleet.host('e1');
    const x1 = fleet.host('x1');
    const dev = wireguardDevice(ids.get('e1')!);
    // the crash: wireguard-go's process killed (its device goes with it); where the kernel's WireGuard
    // made the device, the device deleted
    const pid = (await execFileP('pgrep', ['-fx', `wireguard-go ${dev}`]).catch(() => ({ stdout: '' }))).stdout.trim().split('\n')[0];
    if (pid) process.kill(Number(pid), 'SIGKILL');
    else await e1.inNetns(['ip', 'link', 'del', dev]);
    await waitFor(`${dev} gone on e1`, async () => (await tunnelIndex('e1')) === null, 10_000);
    await routerCounts(true);
    // VXLAN to x1 now finds only the fail-closed route: unreachable, never the LAN
    expect(await e1.inNetns(['ip', 'route', 'get', x1.address, 'ipproto', 'udp', 'dport', '4789']).catch((err: Error) => err.message)).not.toContain('dev eth0');
    expect(await w.ping(ae1, ax1.ip!)).toBe(false);
    await w.big(ae1, ax1.ip!, 200, MARKER).catch(() => '');
    await w.exec(ae1, ['sh', '-c', `echo ${MARKER} | nc -w 2 ${ax1.ip} 7001`]);
    const seen = await routerCounts();
    expect(seen).toMatchObject({ vxlan: 0, marker: 0 });
    // the next pass that checks the overlay makes the device again (with the same key) and traffic flows through it
    await waitFor('a-e1 reaches a-x1 again', async () => w.ping(ae1, ax1.ip!), 40_000);
    await routerCounts(true);
    expect(await w.big(ae1, ax1.ip!, MTU, MARKER)).toBe('udp-ok');
    const after = await routerCounts();
    expect(after.wireguard).toBeGreaterThan(0);
    expect(after).toEqual({ all: after.wireguard, wireguard: after.wireguard, vxlan: 0, marker: 0 });
  }, 120_000);

  test('the control plane SIGKILLed: traffic across the data centers keeps flowing; restarted, it makes no tunnel again', async () => {
    const before = { e1: await tunnelIndex('e1'), x1: await tunnelIndex('x1') };
    expect(before.e1).not.toBeNull();
    await cp!.kill('SIGKILL');
    cp = null;
    for (let i = 0; i < 3; i++) {
      expect(await reachAll(ae1, ax1)).toBe(true);
      expect(await reachAll(ax1, ae2)).toBe(true);
    }
    await start();
    // passes of the new control plane (its /metrics count from 0; one pass per host at a time, every
    // 300 ms): at least three a host on average, each making the overlay's checks, then the same devices
    await waitFor('the new control plane ran its passes', async () => {
      const m = /^gpufleet_reconcile_duration_seconds_count (\d+)/m.exec(await (await api('/metrics')).text());
      return Number(m?.[1] ?? 0) >= 3 * fleet.hosts.length;
    }, 30_000);
    expect({ e1: await tunnelIndex('e1'), x1: await tunnelIndex('x1') }).toEqual(before);
    expect(await reachAll(ae1, ax1)).toBe(true);
  }, 120_000);

  test('x1 rebooted: its pods, started again by themselves, reach DC-E through a tunnel the reconcile pass made again, with the same key', async () => {
    const x1 = fleet.host('x1');
    const id = ids.get('x1')!;
    const keyBefore = (await json(`/v2/hosts/${id}`)).overlay.wireguardPublicKey;
    await x1.powerOff();
    // what a reboot clears: /var/run/netns and /run (account namespaces, DNS state); wireguard-go went with the host
    await removeAccountNamespaces([id]);
    expect(await w.ping(ae1, ax1.ip!)).toBe(false);
    await x1.powerOn();
    await strictRpFilter(x1);
    await waitFor('x1 READY again', async () => (await json(`/v2/hosts/${id}`)).status === 'READY', 60_000);
    for (const [p, key] of [[ax1, alice.key], [bx1, bob.key]] as const) {
      // started again by itself once the pass sees x1's new boot id (docs/pods.md, "A host that restarted")
      await waitFor(`${p.name} started again after the reboot`, async () => {
        const v = await w.view(p, key);
        return v.status === 'RUNNING' && v.statusReason === null && (await w.hostOf(p).catch(() => null)) !== null;
      }, 30_000);
      expect((await w.hostOf(p)).spec.name).toBe('x1');
      // its UDP server ended with the container
      await w.serveUdp(p, path.join(logDir, `${p.name}.udp`));
    }
    await waitFor('a-x1 and a-e1 reach each other again, b-x1 and b-e1 too', async () =>
      (await reachAll(ae1, ax1)) && (await w.ping(ax1, ae2.ip!)) && (await w.ping(bx1, be1.ip!)), 20_000);
    expect((await x1.inNetns(['wg', 'show', wireguardDevice(id), 'public-key'])).trim()).toBe(keyBefore);
    expect((await json(`/v2/hosts/${id}`)).overlay.wireguardPublicKey).toBe(keyBefore);
    await routerCounts(true);
    expect(await w.big(ax1, ae1.ip!, MTU, MARKER)).toBe('udp-ok');
    const seen = await routerCounts();
    expect(seen).toEqual({ all: seen.wireguard, wireguard: seen.wireguard, vxlan: 0, marker: 0 });
  }, 180_000);
});
