// Host faults under the overlay (issue 21; docs/networking.md, "Convergence"), on three namespace test
// hosts of one data center with pods of one account on each:
//   - a host rebooted: its namespace, LAN link, engine and sshd go down and come back (the engine on its
//     data root, as a disk survives, and a new kernel boot id), and what a reboot clears goes too (the
//     account namespaces under /var/run/netns, /run/gpufleet and the pods' resolvers). Its pod's
//     container ended with it; with no user action the pod is started again there (docs/pods.md, "A host
//     that restarted": never EXITED, a pod.starting event saying the host restarted, a host.restarted
//     event), and the reconcile pass restores the host's overlay from nothing: the same address and
//     podnet1, it reaches its peer and is reached, resolves names and is resolved, and the VXLAN guard is back.
//   - a host that goes away for good: its pods' addresses stay theirs; a pod of it terminated is gone
//     from the peers' routes and names at once; once the operator confirms the host lost, its other pod
//     runs elsewhere at the same address, the peers' entries point to the new host and none to the old.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { accountNamespace, vtepMac, vxlanDevice } from '../../../provisioner/index.ts';
import { FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import type { NetnsFleet } from '../../harness/netns-fleet.ts';
import { removeAccountNamespaces, startOverlayWorld, type OverlayWorld, type StartedOverlayWorld, type WorldPod } from '../../harness/overlay-world.ts';
import { waitFor } from '../../harness/wait-for.ts';

const execFileP = promisify(execFile);
const H = FIXTURE_GPUS.H100_80GB_HBM3;
const DOMAIN = 'runpod.internal';
let world: StartedOverlayWorld;
let fleet: NetnsFleet;
let cp: TestControlPlane;
let w: OverlayWorld;
let alice: { accountId: string; key: string };
let r1: WorldPod;
let q: WorldPod;
let g1: WorldPod;
let g2: WorldPod;

let idOf: (name: string) => string;
/** argv in the account's namespace on a host (the overlay's own state there) */
const inAccountNs = async (host: string, argv: string[]) =>
  (await execFileP('nsenter', [`--net=/var/run/netns/${accountNamespace(idOf(host), alice.accountId)}`, ...argv])).stdout;

beforeAll(async () => {
  world = await startOverlayWorld([
    { name: 'f1', dataCenterId: 'DC-A', gpus: [H, H] },
    { name: 'f2', dataCenterId: 'DC-A', forward: 'ACCEPT', gpus: [H] },
    { name: 'f3', dataCenterId: 'DC-A', gpus: [H, H] },
  ]);
  ({ fleet, cp, w, idOf } = world);
  alice = await cp.newAccount('read_write', 1000);
  const body = { image: TEST_IMAGE, globalNetworking: true };
  r1 = await w.createOn('f1', alice.key, 'alice', 'r1', body);
  q = await w.createOn('f2', alice.key, 'alice', 'q', body);
  g1 = await w.createOn('f3', alice.key, 'alice', 'g1', body);
  g2 = await w.createOn('f3', alice.key, 'alice', 'g2', body);
  for (const p of [r1, q, g1, g2]) await waitFor(`podnet1 in ${p.name}`, async () => (await w.podnet1(p)) !== null, 30_000);
  await waitFor('q reaches every other pod', async () => (await Promise.all([r1, g1, g2].map((p) => w.ping(q, p.ip!)))).every(Boolean), 20_000);
}, 300_000);

afterAll(async () => {
  await world?.close();
}, 120_000);

describe('host faults', () => {
  test('a host rebooted (namespace, engine, boot id and /run recreated): its pod runs again by itself, the reconcile pass restores its overlay, the address and name the same', async () => {
    const f1 = fleet.host('f1');
    const before = await w.view(r1, alice.key);
    await f1.powerOff();
    // what a reboot clears: /var/run/netns and /run (the account namespaces, the DNS state, the pods' resolvers)
    await removeAccountNamespaces([idOf('f1')]);
    expect(await w.ping(q, r1.ip!)).toBe(false);
    const bootBefore = ((await (await cp.api(`/v2/hosts/${idOf('f1')}`)).json()) as { bootId: string }).bootId;
    expect(bootBefore).toBe(f1.ssh.bootId);
    await f1.powerOn();
    expect(f1.ssh.bootId).not.toBe(bootBefore);
    await waitFor('f1 READY again', async () => ((await (await cp.api(`/v2/hosts/${idOf('f1')}`)).json()) as { status: string }).status === 'READY', 60_000);
    // its container ended with the host: with no user action the pod is started again on f1 (docs/pods.md,
    // "A host that restarted"), the event saying why; it never says it exited
    type Ev = { type: string; status: string | null; reason: string | null };
    const events = async (id: string, key?: string) =>
      ((await (await cp.api(`/v2/events?resourceId=${id}`, key ? { key } : {})).json()) as { events: Ev[] }).events;
    const restarted = await waitFor('r1 started again after the reboot', async () => {
      const evs = await events(r1.id, alice.key);
      const i = evs.findIndex((e) => e.type === 'pod.starting' && /^host \S+ restarted \(its boot id changed/.test(e.reason ?? ''));
      return i >= 0 && evs.slice(i + 1).some((e) => e.type === 'pod.running') ? evs : null;
    }, 30_000);
    expect(restarted.map((e) => e.type)).not.toContain('pod.exited');
    expect(restarted.find((e) => e.type === 'pod.starting' && e.reason?.includes('restarted'))!.reason).toContain(`host ${idOf('f1')} restarted`);
    const hostEvents = await events(idOf('f1'));
    expect(hostEvents.filter((e) => e.type === 'host.restarted').map((e) => e.reason)).toEqual([expect.stringContaining(`was ${bootBefore}`)]);
    expect(((await (await cp.api(`/v2/hosts/${idOf('f1')}`)).json()) as { bootId: string }).bootId).toBe(f1.ssh.bootId);
    const view = await w.running(r1.id, alice.key);
    expect(view.statusReason).toBeNull();
    const running = Date.now();
    expect((await w.hostOf(r1)).spec.name).toBe('f1');
    expect((await w.view(r1, alice.key)).globalNetworking).toEqual(before.globalNetworking);
    await waitFor('podnet1, traffic both ways and names', async () =>
      (await w.podnet1(r1))?.includes(`inet ${r1.ip}/32`) &&
      (await w.ping(q, r1.ip!)) && (await w.ping(r1, q.ip!)) && (await w.tcp(r1, q.ip!)) &&
      (await w.lookup(r1, `${q.id}.${DOMAIN}`)).ips.includes(q.ip!) && (await w.lookup(q, `${r1.id}.${DOMAIN}`)).ips.includes(r1.ip!), 15_000);
    // the guard against pods sending VXLAN is back in the fresh namespace's INPUT
    await waitFor('the VXLAN guard on f1', async () => /--dport 4789 -j DROP/.test(await f1.inNetns(['iptables', '-w', '5', '-S', 'INPUT'])), 15_000);
    expect(Date.now() - running).toBeLessThan(20_000);
  }, 180_000);

  test("a host gone for good: a pod of it terminated leaves the peers at once; confirmed lost, the other runs elsewhere at its address and the peers' entries follow", async () => {
    const f3 = fleet.host('f3');
    const f2ns = (argv: string[]) => inAccountNs('f2', argv);
    const vx = vxlanDevice(idOf('f2'), alice.accountId);
    expect(await f2ns(['bridge', 'fdb', 'show', 'dev', vx])).toContain(`dst ${f3.address}`);
    await f3.powerOff();
    await removeAccountNamespaces([idOf('f3')]);
    expect(await w.ping(q, g1.ip!)).toBe(false);

    // terminated while its host is away: its route, neighbour and name leave the peers
    expect((await cp.api(`/v2/pods/${g2.id}`, { method: 'DELETE', key: alice.key })).status).toBeLessThan(300);
    await waitFor("g2's route gone from f2", async () => !(await f2ns(['ip', 'route'])).includes(`${g2.ip} `), 5_000);
    await waitFor("g2's name gone from q", async () => (await w.lookup(q, `${g2.id}.${DOMAIN}`)).nx, 5_000);
    // g1 is still on f3 (not moved yet): its route and address stay
    expect(await f2ns(['ip', 'route'])).toContain(`${g1.ip} `);
    expect((await w.view(g1, alice.key)).globalNetworking.ip).toBe(g1.ip);

    await waitFor('f3 UNREACHABLE', async () => ((await (await cp.api(`/v2/hosts/${idOf('f3')}`)).json()) as { status: string }).status === 'UNREACHABLE', 60_000);
    expect((await cp.api(`/v2/hosts/${idOf('f3')}/lost`, { method: 'POST' })).status).toBe(200);
    // moved: running in a container on another host (f1 has the free GPU)
    const now = await waitFor('g1 running on another host', async () => ((await w.view(g1, alice.key)).status === 'RUNNING' ? w.hostOf(g1) : null), 60_000);
    expect(now.spec.name).toBe('f1');
    expect((await w.view(g1, alice.key)).globalNetworking.ip).toBe(g1.ip);
    await waitFor('q reaches g1 on f1, by address and name', async () =>
      (await w.ping(q, g1.ip!)) && (await w.lookup(q, `${g1.id}.${DOMAIN}`)).ips.includes(g1.ip!), 20_000);
    // f2's entries: g1's neighbour is f1's VXLAN device for the account, nothing points to f3
    expect(await f2ns(['ip', 'neigh', 'show', g1.ip!])).toContain(vtepMac(idOf('f1'), alice.accountId));
    await waitFor('no forwarding entry to f3 on f2', async () => !(await f2ns(['bridge', 'fdb', 'show', 'dev', vx])).includes(`dst ${f3.address}`), 5_000);
  }, 180_000);
});
