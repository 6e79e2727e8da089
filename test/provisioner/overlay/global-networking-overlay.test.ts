// Global networking on a fleet of separate hosts (issue 21; docs/networking.md): two accounts with
// globally-networked pods on three namespace test hosts in two data centers (one host with FORWARD
// policy ACCEPT, two with DROP), the control plane and its provisioner driving them over SSH. Every
// pair is probed with ICMP, TCP and UDP over the overlay, and by name (internal DNS): a pod reaches its own account's pods and
// never another account's; a pod without globalNetworking is on no overlay; spoofed source addresses
// and MACs are dropped; turning it off and on works live; the address stays across a stop and a start
// that lands on another host.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { vtepMac } from '../../../provisioner/overlay/overlay-plan.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import type { NetnsFleet } from '../../harness/netns-fleet.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { startOverlayWorld, PROBE, PYTHON, UDP_PORT, type OverlayWorld, type StartedOverlayWorld, type WorldPod } from '../../harness/overlay-world.ts';

const H = FIXTURE_GPUS.H100_80GB_HBM3;
let world: StartedOverlayWorld;
let fleet: NetnsFleet;
let cp: TestControlPlane;
let w: OverlayWorld;
let dir: string;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
const pods: WorldPod[] = [];
let plain: WorldPod;
const keyOf = (p: WorldPod) => (p.account === 'alice' ? alice.key : bob.key);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gpufleet-overlay-'));
  world = await startOverlayWorld([
    { name: 'a1', dataCenterId: 'DC-A', forward: 'DROP', gpus: [H, H] },
    { name: 'a2', dataCenterId: 'DC-A', forward: 'ACCEPT', gpus: [H, H, H] },
    { name: 'b1', dataCenterId: 'DC-B', forward: 'DROP', gpus: [H, H, H] },
  ]);
  ({ fleet, cp, w } = world);
  alice = await cp.newAccount('read_write', 1000);
  bob = await cp.newAccount('read_write', 1000);
  // two of each account in DC-A (four GPUs of five: both hosts get some), one of each in DC-B
  for (const [who, name, dc] of [
    ['alice', 'al-1', 'DC-A'], ['bob', 'bo-1', 'DC-A'], ['alice', 'al-2', 'DC-A'], ['bob', 'bo-2', 'DC-A'], ['alice', 'al-3', 'DC-B'], ['bob', 'bo-3', 'DC-B'],
  ] as const) {
    const key = who === 'alice' ? alice.key : bob.key;
    pods.push(await w.create(key, who, name, { image: TEST_IMAGE, globalNetworking: true, dataCenterIds: [dc] }));
  }
  plain = await w.create(alice.key, 'alice', 'al-plain', { image: TEST_IMAGE, dataCenterIds: ['DC-B'] });
  // every globally-networked pod has its overlay interface
  for (const p of pods) await waitFor(`podnet1 in ${p.name}`, async () => (await w.podnet1(p)) !== null, 20_000);
  for (const p of [...pods, plain]) await w.serveUdp(p, path.join(dir, `${p.name}.udp`));
  // across the data centers the tunnel needs both hosts' keys (each made at its host's first overlay run): up once al-1 reaches al-3
  await waitFor('al-1 reaches al-3 across the data centers', async () => w.ping(pods[0]!, pods[4]!.ip!), 30_000);
}, 300_000);

afterAll(async () => {
  w?.stopServers();
  await world?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 120_000);

describe('the overlay between hosts', () => {
  test('pods are spread over the three hosts; each globally-networked pod has podnet1 with its address, MTU 1370 (two data centers: VXLAN and WireGuard under 1500); the plain pod has none', async () => {
    const hosts = new Set(await Promise.all(pods.map(async (p) => (await w.hostOf(p)).spec.name)));
    expect([...hosts].sort()).toEqual(['a1', 'a2', 'b1']);
    for (const p of pods) {
      expect(await w.podnet1(p)).toContain(`inet ${p.ip}/32`);
      expect(await w.exec(p, ['cat', '/sys/class/net/podnet1/mtu'])).toBe('1370\n');
    }
    expect(await w.podnet1(plain)).toBeNull();
  });

  test('every pair, ICMP, TCP, UDP and DNS: a pod reaches (and resolves) the pods of its own account on every host, never those of the other', async () => {
    const results = await Promise.all(
      pods.flatMap((from) =>
        pods.filter((to) => to !== from).map(async (to) => ({
          pair: `${from.name} → ${to.name}`,
          same: from.account === to.account,
          toIp: to.ip!,
          icmp: await w.ping(from, to.ip!),
          tcp: await w.tcp(from, to.ip!),
          udp: await w.udp(from, to.ip!),
          // its internalDns inside the pod: the overlay address, or NXDOMAIN
          dns: await w.lookup(from, `${to.id}.runpod.internal`),
        })),
      ),
    );
    for (const r of results)
      expect({ pair: r.pair, icmp: r.icmp, tcp: r.tcp, udp: r.udp, dns: r.dns }).toEqual({
        pair: r.pair, icmp: r.same, tcp: r.same, udp: r.same, dns: r.same ? { ips: [r.toIp], nx: false } : { ips: [], nx: true },
      });
  }, 180_000);

  test('a pod without globalNetworking reaches no overlay address; over the overlay a pod reaches no host and not the control plane', async () => {
    const al1 = pods[0]!;
    const reached = await Promise.all(pods.flatMap((to) => [w.ping(plain, to.ip!), w.udp(plain, to.ip!)]));
    expect(reached.every((r) => r === false)).toBe(true);
    // through podnet1: hosts' LAN addresses, the control plane's, the gateway itself
    const targets = [...fleet.hosts.map((h) => h.address), fleet.localAddress];
    expect(await Promise.all(targets.map((t) => w.ping(al1, t, ['-I', 'podnet1'])))).toEqual(targets.map(() => false));
    const gateway = (await w.exec(al1, ['ip', 'route', 'show', 'dev', 'podnet1']))!.match(/via (\S+)/)![1]!;
    expect(await w.ping(al1, gateway)).toBe(false);
    expect(await w.exec(al1, ['sh', '-c', `nc -w 2 ${gateway} 22 </dev/null`])).toBeNull();
  }, 120_000);
});

describe('spoofing (tenants are untrusted)', () => {
  const log = (p: WorldPod) => path.join(dir, `${p.name}.udp`);
  const hits = async (p: WorldPod, marker: string) => (await readFile(log(p), 'utf8').catch(() => '')).split('\n').filter((l) => l.includes(marker)).length;

  test("a raw-socket packet with another pod's source address is dropped; the same packet with its own source arrives", async () => {
    const [al1, , al2] = pods as [WorldPod, WorldPod, WorldPod];
    const al3 = pods[4]!;
    await writeFile(log(al2), '');
    // al1 claims to be al3 (same account, another host) and bob's bo-1
    await w.inPod(al1, [PYTHON, PROBE, 'raw', al3.ip!, al2.ip!, String(UDP_PORT)]);
    await w.inPod(al1, [PYTHON, PROBE, 'raw', pods[1]!.ip!, al2.ip!, String(UDP_PORT)]);
    await w.inPod(al1, [PYTHON, PROBE, 'raw', al1.ip!, al2.ip!, String(UDP_PORT)]);
    await waitFor('the honest packet', async () => (await hits(al2, `raw-from-${al1.ip}`)) === 1, 5_000);
    expect(await hits(al2, `raw-from-${al3.ip}`)).toBe(0);
    expect(await hits(al2, `raw-from-${pods[1]!.ip}`)).toBe(0);
  }, 60_000);

  test('an address added from the host side (nsenter … ip addr, a pod with NET_ADMIN) sends nothing; a changed MAC neither', async () => {
    const [al1, , al2] = pods as [WorldPod, WorldPod, WorldPod];
    const victim = pods[4]!.ip!;
    await w.inPod(al1, ['ip', 'addr', 'add', `${victim}/32`, 'dev', 'podnet1']);
    try {
      expect((await w.inPod(al1, [PYTHON, PROBE, 'bind-ask', victim, al2.ip!, String(UDP_PORT)])).trim()).toBe('timeout');
      expect(await w.udp(al1, al2.ip!)).toBe(true);
    } finally {
      await w.inPod(al1, ['ip', 'addr', 'del', `${victim}/32`, 'dev', 'podnet1']);
    }
    const mac = /link\/ether (\S+)/.exec(await w.inPod(al1, ['ip', '-o', 'link', 'show', 'podnet1']))![1]!;
    await w.inPod(al1, ['ip', 'link', 'set', 'podnet1', 'address', '0a:00:00:00:00:01']);
    try {
      expect(await w.udp(al1, al2.ip!)).toBe(false);
      expect(await w.ping(al1, al2.ip!)).toBe(false);
    } finally {
      await w.inPod(al1, ['ip', 'link', 'set', 'podnet1', 'address', mac]);
    }
    expect(await w.udp(al1, al2.ip!)).toBe(true);
  }, 60_000);

  test("a pod cannot inject into an account's overlay by sending VXLAN to a host; the same packet from the host itself would land", async () => {
    const [al1, bo1, al2] = pods as [WorldPod, WorldPod, WorldPod];
    const target = await w.hostOf(al2);
    const targetId = [...w.hostsById].find(([, h]) => h === target)![0];
    const vni = (await cp.services.store.get('accounts', alice.accountId))!.overlayVni!;
    const frame = [target.address, String(vni), vtepMac(targetId, alice.accountId), al1.ip!, al2.ip!, String(UDP_PORT)];
    await writeFile(log(al2), '');
    // bob's pod, wherever it runs (its packets leave through Docker's bridge, NATed to its host's address)
    await w.inPod(bo1, [PYTHON, PROBE, 'vxlan', ...frame]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await hits(al2, 'vxlan-from-')).toBe(0);
    // the packet is well formed: sent from a host's own namespace, it is delivered
    await fleet.hosts.find((h) => h !== target)!.inNetns([PYTHON, PROBE, 'vxlan', ...frame]);
    await waitFor('the host-made packet', async () => (await hits(al2, 'vxlan-from-')) === 1, 5_000);
  }, 60_000);
});

describe('live changes', () => {
  test('off and on again on a running pod: unreachable and without podnet1 within 5 s, back with the same address within 5 s, no restart', async () => {
    const [al1, , al2] = pods as [WorldPod, WorldPod, WorldPod];
    const before = await w.view(al2, alice.key);
    let res = await cp.api(`/v2/pods/${al2.id}`, { method: 'PATCH', key: alice.key, json: { globalNetworking: false } });
    expect(res.status).toBe(200);
    const off = Date.now();
    await waitFor('podnet1 gone and al2 unreachable', async () => (await w.podnet1(al2)) === null && !(await w.ping(al1, al2.ip!)), 5_000);
    expect(Date.now() - off).toBeLessThan(5_000 + 2_000);
    res = await cp.api(`/v2/pods/${al2.id}`, { method: 'PATCH', key: alice.key, json: { globalNetworking: true } });
    expect(((await res.json()) as { globalNetworking: { ip: string } }).globalNetworking.ip).toBe(al2.ip);
    const on = Date.now();
    await waitFor('al2 reachable again', async () => (await w.ping(al1, al2.ip!)) && (await w.tcp(al1, al2.ip!)), 5_000);
    expect(Date.now() - on).toBeLessThan(5_000 + 2_000);
    const after = await w.view(al2, alice.key);
    expect(after.runtime.uptime).toBeGreaterThanOrEqual(before.runtime.uptime);
    // the UDP server ran in the old namespace: still the same one (no restart)
    expect(await w.udp(al1, al2.ip!)).toBe(true);
  }, 60_000);

  test('the address stays across a stop and a start that lands on another host, and peers reach it there', async () => {
    const al1 = pods[0]!;
    const bo1 = pods[1]!;
    const from = await w.hostOf(bo1);
    const hostId = [...w.hostsById].find(([, h]) => h === from)![0];
    expect((await cp.api(`/v2/pods/${bo1.id}/action`, { method: 'POST', key: bob.key, json: { action: 'stop' } })).status).toBe(200);
    await waitFor('bo-1 EXITED', async () => (await w.view(bo1, bob.key)).status === 'EXITED', 30_000);
    // its host takes no new pods: the start places it on the other host of DC-A
    expect((await cp.api(`/v2/hosts/${hostId}/drain`, { method: 'POST', json: { drained: true } })).status).toBe(200);
    try {
      expect((await cp.api(`/v2/pods/${bo1.id}/action`, { method: 'POST', key: bob.key, json: { action: 'start' } })).status).toBe(200);
      const v = await w.running(bo1.id, bob.key);
      expect(v.globalNetworking.ip).toBe(bo1.ip);
      expect((await w.hostOf(bo1)).spec.name).not.toBe(from.spec.name);
      await waitFor('podnet1 on the new host', async () => (await w.podnet1(bo1))?.includes(`inet ${bo1.ip}/32`) ?? false, 10_000);
      const bo2 = pods[3]!;
      const bo3 = pods[5]!;
      await waitFor('bob reaches bo-1 at its old address', async () => (await w.ping(bo2, bo1.ip!)) && (await w.ping(bo3, bo1.ip!)), 10_000);
      expect(await w.ping(al1, bo1.ip!)).toBe(false);
    } finally {
      await cp.api(`/v2/hosts/${hostId}/drain`, { method: 'POST', json: { drained: false } });
    }
  }, 120_000);
});
