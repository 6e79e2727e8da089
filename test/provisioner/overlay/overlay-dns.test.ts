// The internal DNS lines of the overlay script (provisioner/overlay/overlay-dns.ts): the account's names
// (its local and remote pods) are what the hosts file gets, the script is valid shell, and a word that
// fails its grammar (a resolv.conf path, the domain, a pod id) is refused before anything reaches a host.
import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import type { HostOverlayPlan } from '../../../provisioner/overlay/overlay-plan.ts';
import { overlayScript } from '../../../provisioner/overlay/overlay-script.ts';

const plan = (over: { domain?: string; resolvConf?: string | null; podId?: string } = {}): HostOverlayPlan => ({
  nsPrefix: 'gfo-0123abcd-',
  underlay: '10.0.0.5',
  tunnelDevice: 'wgf0123abcd4567',
  tunnel: null,
  cidr: '10.200.0.0/13',
  gateway: '10.200.0.1',
  mtu: 1450,
  port: 4789,
  domain: over.domain ?? 'runpod.internal',
  accounts: [{
    accountId: 'acct_1',
    vni: 4242,
    ns: 'gfo-0123abcd-0123456789ab',
    vxlan: 'gfx0123456789ab',
    vtepMac: '02:00:00:00:00:01',
    local: [{
      podId: over.podId ?? 'pod1abc',
      ip: '10.200.3.4',
      mac: '0a:00:00:00:00:02',
      veth: 'gfp0123456789ab',
      peer: 'gfq0123456789ab',
      pid: 4321,
      resolvConf: over.resolvConf === undefined ? `/var/lib/docker/containers/${'ab12'.repeat(16)}/resolv.conf` : over.resolvConf,
    }],
    remote: [{ podId: 'pod2def', ip: '10.200.9.9', host: '10.0.0.6', mac: '02:00:00:00:00:03' }],
  }],
});

describe('overlay DNS lines', () => {
  test("the hosts file lists the account's local and remote pods under the domain; the script parses as sh", () => {
    const script = overlayScript(plan());
    expect(script).toContain("'10.200.3.4 pod1abc.runpod.internal' '10.200.9.9 pod2def.runpod.internal'");
    expect(script).toContain('--listen-address=127.0.0.53 --bind-interfaces');
    expect(script).toContain('"--local=/$6/"');
    expect(script).toMatch(/dns_start 4321 \S+\.root \S+\/hosts\.d \S+\.up \S+\.run runpod\.internal /);
    expect(script).toContain('setpriv --no-new-privs --bounding-set=-all,+net_bind_service,+setuid,+setgid -- dnsmasq');
    expect(script).toContain('--no-hosts');
    execFileSync('sh', ['-n'], { input: script });
  });

  test('a pod whose resolv.conf Docker did not report gets no resolver, but its name is listed', () => {
    const script = overlayScript(plan({ resolvConf: null }));
    expect(script).not.toContain('dns_start 4321');
    expect(script).toContain('pod1abc.runpod.internal');
  });

  test.each([
    ['a path with a space', { resolvConf: '/var/lib/docker/containers/a b/resolv.conf' }],
    ['a path with ..', { resolvConf: '/var/lib/docker/../../etc/resolv.conf' }],
    ['a path with a quote', { resolvConf: "/var/lib/x'y/resolv.conf" }],
    ['a relative path', { resolvConf: 'containers/abc/resolv.conf' }],
    ['another file', { resolvConf: '/etc/shadow' }],
    ["the host's own resolv.conf", { resolvConf: '/etc/resolv.conf' }],
    ['a domain with a quote', { domain: "runpod.internal'; rm -rf /" }],
    ['a domain with a slash', { domain: 'runpod/internal' }],
    ['a pod id with a space', { podId: 'pod 1' }],
  ])('%s is refused', (_what, over) => {
    expect(() => overlayScript(plan(over))).toThrow(/not a valid/);
  });
});
