// The overlay range against the hosts' own addresses (issue 21, docs/networking.md): a host whose
// addresses overlap GPUFLEET_OVERLAY_CIDR is refused at enrolment (422 HOST_REQUIREMENT, nothing
// stored), one clear of it is enrolled. The host is a namespace test host (netns-fleet.ts) with a LAN
// address of its own.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { globalNetworkSettings } from '../../../model/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startNetnsFleet, type NetnsFleet } from '../../harness/netns-fleet.ts';

let fleet: NetnsFleet;
const cps: TestControlPlane[] = [];

beforeAll(async () => {
  fleet = await startNetnsFleet({ hosts: [{ name: 'o1', dataCenterId: 'DC-O' }] });
}, 120_000);
afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await fleet?.dispose();
}, 120_000);

const enrol = (cp: TestControlPlane) => {
  const h = fleet.hosts[0]!;
  return cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:22`, privateKey: h.ssh.privateKey, dataCenterId: 'DC-O' } });
};

describe('the overlay range and the hosts', () => {
  test("a host whose address lies in the overlay range is refused (422 HOST_REQUIREMENT naming both); nothing is stored", async () => {
    const lan = fleet.lanOf('DC-O');
    const cp = await startTestControlPlane({ config: { globalNetwork: globalNetworkSettings({ overlayCidr: lan }) } });
    cps.push(cp);
    const res = await enrol(cp);
    const body = (await res.json()) as { code: string; detail: string };
    expect(res.status, JSON.stringify(body)).toBe(422);
    expect(body.code).toBe('HOST_REQUIREMENT');
    expect(body.detail).toContain(fleet.hosts[0]!.address);
    expect(body.detail).toContain(lan);
    expect(await cp.services.store.count('hosts')).toBe(0);
  }, 60_000);

  test('with the default range the same host is enrolled, its addresses recorded', async () => {
    const cp = await startTestControlPlane();
    cps.push(cp);
    const res = await enrol(cp);
    const body = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    const host = await cp.services.store.get('hosts', body.id);
    expect(host?.facts.addresses).toContain(`${fleet.hosts[0]!.address}/24`);
  }, 60_000);
});
