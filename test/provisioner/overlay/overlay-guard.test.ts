// The VXLAN guard on every host (docs/networking.md, "The VXLAN guard"): a namespace test host
// (netns-fleet.ts, its own iptables and Docker engine) enrolled with no globally-networked pod gets the
// rules that drop pods' UDP to the overlay's port, and when they are deleted from its iptables (as a
// reboot or `iptables -F` would) the provisioner puts them back within the verify interval.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { provisioner } from '../../../provisioner/index.ts';
import { VXLAN_PORT } from '../../../provisioner/overlay/overlay-plan.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { enrolTestHost } from '../../../testing/index.ts';
import { startNetnsFleet, type NetnsFleet } from '../../harness/netns-fleet.ts';
import { waitFor } from '../../harness/wait-for.ts';

const VERIFY_MS = 1_000;
let fleet: NetnsFleet;
let cp: TestControlPlane;

beforeAll(async () => {
  fleet = await startNetnsFleet({ hosts: [{ name: 'g1', dataCenterId: 'DC-G' }] });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config: { overlayVerifyMs: VERIFY_MS } });
  await enrolTestHost(cp, fleet.hosts[0]!.ssh, { dataCenterId: 'DC-G' });
}, 180_000);

afterAll(async () => {
  await cp?.close();
  await fleet?.dispose();
}, 120_000);

const rule = (chain: string, bridge: string) => `-A ${chain} -i ${bridge} -p udp -m udp --dport ${VXLAN_PORT} -j DROP`;
const rules = async (chain: string) => (await fleet.hosts[0]!.inNetns(['iptables', '-w', '5', '-S', chain])).split('\n');

describe('the VXLAN guard', () => {
  test('a host without globally-networked pods gets it; deleted, it is back within the verify interval', async () => {
    const host = fleet.hosts[0]!;
    // the host's own Docker engine made DOCKER-USER: forwarded traffic is guarded there
    for (const chain of ['INPUT', 'DOCKER-USER'])
      for (const bridge of ['docker0', 'gf+']) await waitFor(`${chain} ${bridge} guarded`, async () => (await rules(chain)).includes(rule(chain, bridge)), 20_000);
    expect(await cp.services.store.count('pods')).toBe(0);
    // lost: deleted from the host's iptables (as `iptables -F` or a reboot would)
    await host.inNetns(['iptables', '-w', '5', '-D', 'INPUT', '-i', 'docker0', '-p', 'udp', '--dport', String(VXLAN_PORT), '-j', 'DROP']);
    await host.inNetns(['iptables', '-w', '5', '-D', 'DOCKER-USER', '-i', 'gf+', '-p', 'udp', '--dport', String(VXLAN_PORT), '-j', 'DROP']);
    expect(await rules('INPUT')).not.toContain(rule('INPUT', 'docker0'));
    const gone = Date.now();
    // back within the verify interval (plus a pass and a loaded machine's slack)
    await waitFor('guard back', async () => (await rules('INPUT')).includes(rule('INPUT', 'docker0')) && (await rules('DOCKER-USER')).includes(rule('DOCKER-USER', 'gf+')), VERIFY_MS + 10_000);
    expect(Date.now() - gone).toBeLessThan(VERIFY_MS + 10_000);
    // each rule once: the check-then-add adds nothing that is in place
    for (const chain of ['INPUT', 'DOCKER-USER'])
      for (const bridge of ['docker0', 'gf+']) expect((await rules(chain)).filter((l) => l === rule(chain, bridge))).toHaveLength(1);
  }, 120_000);
});
