// A host's address for the overlay (issue 21; docs/networking.md, "A host's overlay address"), on two
// namespace test hosts of one data center: h1 enrolled by its address, h2 by a name (`gpu-<pid>.rack2`,
// an /etc/hosts entry of this machine for the test's life, as an operator's DNS would have it).
//   - h2's overlay address is its own address of the control plane's SSH connection, read by the pass
//     (`connectedAddress`): pods of one account on h1 and h2 reach each other over podnet1 and resolve
//     each other's names, and h1's forwarding entry for h2's pod names h2's LAN address;
//   - an operator's overlayAddress the host does not have, a loopback one, or one that is not an address
//     is 422 VALIDATION_FAILED naming $.overlayAddress, and nothing changes;
//   - one it has (a second address on its LAN link): the peers' entries and h2's own VXLAN device move
//     to it and traffic flows; null puts the default back.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { accountNamespace, vxlanDevice } from '../../../provisioner/index.ts';
import { FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import type { NetnsFleet } from '../../harness/netns-fleet.ts';
import { startOverlayWorld, type OverlayWorld, type StartedOverlayWorld, type WorldPod } from '../../harness/overlay-world.ts';
import { addHostsLine } from '../../harness/etc-hosts.ts';
import { waitFor } from '../../harness/wait-for.ts';

const execFileP = promisify(execFile);
const H = FIXTURE_GPUS.H100_80GB_HBM3;
const DOMAIN = 'runpod.internal';
const NAME = `gpu-${process.pid}.rack2`;
/** removes this test's line of /etc/hosts again (etc-hosts.ts: only it, under the shared lock) */
let removeHostsLine: () => Promise<void> = async () => undefined;
let world: StartedOverlayWorld;
let fleet: NetnsFleet;
let cp: TestControlPlane;
let w: OverlayWorld;
let idOf: (name: string) => string;
let alice: { accountId: string; key: string };
let a: WorldPod;
let b: WorldPod;

type HostView = { address: string; connectedAddress: string | null; overlayAddress: string | null; overlayUnderlay: string | null };
const hostView = async (name: string) => (await (await cp.api(`/v2/hosts/${idOf(name)}`)).json()) as HostView;
const patch = (name: string, json: unknown) => cp.api(`/v2/hosts/${idOf(name)}`, { method: 'PATCH', json });
/** argv in the account's namespace on a host */
const inAccountNs = async (host: string, argv: string[]) =>
  (await execFileP('nsenter', [`--net=/var/run/netns/${accountNamespace(idOf(host), alice.accountId)}`, ...argv])).stdout;
/** the forwarding entries of the account's VXLAN device on a host */
const fdb = (host: string) => inAccountNs(host, ['bridge', 'fdb', 'show', 'dev', vxlanDevice(idOf(host), alice.accountId)]);
const both = async () => (await w.ping(a, b.ip!)) && (await w.ping(b, a.ip!)) && (await w.tcp(a, b.ip!));

beforeAll(async () => {
  try {
    world = await startOverlayWorld(
      [
        { name: 'h1', dataCenterId: 'DC-A', gpus: [H] },
        { name: 'h2', dataCenterId: 'DC-A', gpus: [H] },
      ],
      {},
      {
        enrolBy: async (h) => {
          if (h.spec.name !== 'h2') return undefined;
          removeHostsLine = await addHostsLine(`${h.address} ${NAME}`);
          return NAME;
        },
      },
    );
  } catch (e) {
    await removeHostsLine();
    throw e;
  }
  ({ fleet, cp, w, idOf } = world);
  alice = await cp.newAccount('read_write', 1000);
  const body = { image: TEST_IMAGE, globalNetworking: true };
  a = await w.createOn('h1', alice.key, 'alice', 'a', body);
  b = await w.createOn('h2', alice.key, 'alice', 'b', body);
}, 300_000);

afterAll(async () => {
  await world?.close();
  await removeHostsLine();
}, 120_000);

describe("a host's overlay address", () => {
  test("a host enrolled by a name: its overlay address is its own address of the control plane's connection, and its pods join the overlay", async () => {
    const h2 = fleet.host('h2');
    const view = await waitFor('h2 connectedAddress', async () => ((await hostView('h2')).connectedAddress ? hostView('h2') : null), 15_000);
    expect(view).toMatchObject({ address: NAME, connectedAddress: h2.address, overlayAddress: null, overlayUnderlay: h2.address });
    for (const p of [a, b]) await waitFor(`podnet1 in ${p.name}`, async () => (await w.podnet1(p))?.includes(`inet ${p.ip}/32`), 15_000);
    await waitFor('a and b reach each other over podnet1, by address and name', async () =>
      (await both()) && (await w.lookup(a, `${b.id}.${DOMAIN}`)).ips.includes(b.ip!) && (await w.lookup(b, `${a.id}.${DOMAIN}`)).ips.includes(a.ip!), 15_000);
    expect(await fdb('h1')).toContain(`dst ${h2.address}`);
  }, 60_000);

  test('an overlayAddress the host does not have, a loopback one or a word is 422 naming $.overlayAddress, and nothing changes', async () => {
    const before = await hostView('h2');
    for (const overlayAddress of ['10.99.99.99', '127.0.0.1', 'gpu-7.rack2']) {
      const res = await patch('h2', { overlayAddress });
      const problem = (await res.json()) as { code: string; errors: string[] };
      expect(res.status, JSON.stringify(problem)).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.errors.join(' ')).toContain('$.overlayAddress');
    }
    expect(await hostView('h2')).toEqual(before);
    expect((await patch('h2', { overlayAddress: 5 })).status).toBe(422);
  });

  test('an overlayAddress the host has: the peers and its own VXLAN device move to it and traffic flows; null puts the default back', async () => {
    const h2 = fleet.host('h2');
    const [lan] = fleet.lanOf('DC-A').split('/');
    const second = lan!.replace(/\.0$/, '.200');
    await h2.inNetns(['ip', 'addr', 'add', `${second}/24`, 'dev', 'eth0']);
    const res = await patch('h2', { overlayAddress: second });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ overlayAddress: second, overlayUnderlay: second });
    await waitFor("h1's entry for b names the new address, and only it", async () => (await fdb('h1')).includes(`dst ${second}`) && !(await fdb('h1')).includes(`dst ${h2.address} `), 5_000);
    await waitFor("h2's VXLAN device sends from it", async () =>
      (await inAccountNs('h2', ['ip', '-d', 'link', 'show', vxlanDevice(idOf('h2'), alice.accountId)])).includes(`local ${second} `), 5_000);
    await waitFor('a and b reach each other', both, 10_000);

    const back = await patch('h2', { overlayAddress: null });
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ overlayAddress: null, overlayUnderlay: h2.address });
    await waitFor("h1's entry for b names h2's own address again, and only it", async () => (await fdb('h1')).includes(`dst ${h2.address} `) && !(await fdb('h1')).includes(`dst ${second}`), 5_000);
    await waitFor('a and b reach each other', both, 10_000);
  }, 60_000);
});
