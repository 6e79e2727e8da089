// The tunnel's plan and script lines without a host (docs/networking.md, "Between data centers" and
// "MTU"): podnet1's MTU from the hosts' reports and the settings; the peers and fail-closed addresses of a
// host; the grammar every key and address passes before it reaches a script; what a run reports back.
import { describe, expect, test } from 'vitest';
import { globalNetworkSettings, parseOverlayMtu, type HostRecord } from '../../../model/index.ts';
import { overlayMtu, planTunnel, wireguardDevice, type HostOverlayPlan } from '../../../provisioner/overlay/overlay-plan.ts';
import { readReport, tunnelLines, UNDERLAY_MTU, WIREGUARD_KEY } from '../../../provisioner/overlay/overlay-wireguard.ts';

const KEY_A = 'wf6Ql1jN1GGfwczeA8DBWJviDKMzudwdnlXgevUE6zA=';
const KEY_B = 'lYQ0JI1ICG9vmi444owXr7AwmLSn+Iiynx0xJ+spnCY=';
const host = (id: string, address: string, dataCenterId: string, overlay?: HostRecord['overlay']) =>
  ({ id, address, dataCenterId, ...(overlay ? { overlay } : {}) }) as HostRecord;
const settings = globalNetworkSettings();

describe("podnet1's MTU", () => {
  test('one data center on 1500-byte networks: 1450; two: 1370 (WireGuard too); the smallest underlay counts; GPUFLEET_OVERLAY_MTU wins', () => {
    const a1 = host('a1', '10.0.1.10', 'A', { underlayMtu: 9000, wireguardPublicKey: null });
    const a2 = host('a2', '10.0.1.11', 'A');
    const b1 = host('b1', '10.0.2.10', 'B', { underlayMtu: 1500, wireguardPublicKey: KEY_B });
    expect(overlayMtu(settings, [])).toBe(1450);
    expect(overlayMtu(settings, [a1])).toBe(8950);
    expect(overlayMtu(settings, [a1, a2])).toBe(1450);
    expect(overlayMtu(settings, [a1, b1])).toBe(1370);
    // a data center taken out, or a host enrolled by name, is not in the global network
    expect(overlayMtu(globalNetworkSettings({ exclude: 'B' }), [a1, b1])).toBe(8950);
    expect(overlayMtu(settings, [a1, host('b2', 'gpu.example.com', 'B')])).toBe(8950);
    expect(overlayMtu(globalNetworkSettings({ overlayMtu: '1400' }), [a1, b1])).toBe(1400);
  });

  test('GPUFLEET_OVERLAY_MTU takes a whole number from 576 to 9000', () => {
    expect(parseOverlayMtu(undefined)).toBeUndefined();
    expect(parseOverlayMtu(' 8900 ')).toBe(8900);
    for (const bad of ['575', '9001', '1400.5', '1e3', '-1', 'jumbo']) expect(() => parseOverlayMtu(bad)).toThrow(/GPUFLEET_OVERLAY_MTU/);
  });
});

describe("a host's tunnel", () => {
  const a1 = host('a1', '10.0.1.10', 'A', { underlayMtu: 1500, wireguardPublicKey: KEY_A });
  const a2 = host('a2', '10.0.1.11', 'A', { underlayMtu: 1500, wireguardPublicKey: KEY_A });
  const b1 = host('b1', '10.0.2.10', 'B', { underlayMtu: 1500, wireguardPublicKey: KEY_B });
  const b2 = host('b2', '10.0.2.9', 'B', { underlayMtu: 1500, wireguardPublicKey: null });

  test("peers are the other data centers' hosts with a key; every other data center's host is closed to plaintext; none in one data center", () => {
    expect(planTunnel(a1, settings, [a1, a2, b1, b2], 1370)).toEqual({
      port: 51820,
      mtu: 1420,
      peers: [{ address: '10.0.2.10', publicKey: KEY_B }],
      closed: ['10.0.2.9', '10.0.2.10'],
    });
    expect(planTunnel(a1, settings, [a1, a2], 1450)).toBeNull();
    expect(planTunnel(a1, globalNetworkSettings({ exclude: 'B' }), [a1, b1], 1450)).toBeNull();
    expect(planTunnel(b1, globalNetworkSettings({ exclude: 'B' }), [a1, b1], 1450)).toBeNull();
  });

  const plan = (tunnel: HostOverlayPlan['tunnel']): HostOverlayPlan => ({
    nsPrefix: 'gfo-0123abcd-', underlay: '10.0.1.10', cidr: '10.200.0.0/13', gateway: '10.200.0.1', mtu: 1370, port: 4789,
    domain: 'runpod.internal', tunnelDevice: wireguardDevice('a1'), tunnel, accounts: [],
  });

  test('the script names each peer by its public key and address and never holds a private key; no tunnel: the device, rules, table and guard go', () => {
    const text = tunnelLines(plan(planTunnel(a1, settings, [a1, b1, b2], 1370))).join('\n');
    expect(text).toContain(`'PublicKey = ${KEY_B}' 'Endpoint = 10.0.2.10:51820' 'AllowedIPs = 10.0.2.10/32'`);
    expect(text).toContain('ip route replace unreachable 10.0.2.9/32 metric 100 table 51820');
    expect(text).toContain('ip rule add pref 4789 ipproto udp dport 4789 lookup 51820');
    expect(text).not.toMatch(/PrivateKey = [A-Za-z0-9+/]/);
    const none = tunnelLines(plan(null)).join('\n');
    expect(none).toContain(`ip link del ${wireguardDevice('a1')}`);
    expect(none).toContain('ip rule del pref 4789');
    expect(none).toContain('ip route flush table 51820');
  });

  test('a key or address that is not one is refused before any script is made', () => {
    const t = planTunnel(a1, settings, [a1, b1], 1370)!;
    for (const publicKey of ['x', `${KEY_B.slice(0, 43)}'`, "$(reboot)AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", `${KEY_B}\n`, 'lYQ0JI1ICG9vmi444owXr7AwmLSn+Iiynx0xJ+spnCZ='])
      expect(() => tunnelLines(plan({ ...t, peers: [{ address: '10.0.2.10', publicKey }] }))).toThrow(/WireGuard public key/);
    expect(() => tunnelLines(plan({ ...t, closed: ['10.0.2.10; reboot'] }))).toThrow(/IPv4 address/);
    expect(() => tunnelLines({ ...plan(t), tunnelDevice: 'eth0' })).toThrow(/device name/);
  });

  test("what a run reports: the underlay's MTU and the public key, each only when it passes its grammar", () => {
    expect(readReport(`x\n${UNDERLAY_MTU} 1500\n${WIREGUARD_KEY} ${KEY_A}\n`)).toEqual({ underlayMtu: 1500, wireguardPublicKey: KEY_A });
    expect(readReport(`${UNDERLAY_MTU} 12\n${WIREGUARD_KEY} not-a-key\n`)).toEqual({ underlayMtu: null, wireguardPublicKey: null });
    expect(readReport('')).toEqual({ underlayMtu: null, wireguardPublicKey: null });
  });
});
