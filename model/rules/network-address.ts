// Which addresses the control plane and the hosts' Docker daemons may be sent to on a tenant's word:
// one rule for job webhooks (core/jobs/webhook.ts) and image registries (model/rules/image-registry.ts,
// provisioner/registry-guard.ts). Loopback, private, link-local, CGNAT, documentation, multicast and
// reserved ranges are private; an IPv6 address that carries an IPv4 one (mapped, compatible,
// translated, NAT64, 6to4, Teredo) is judged by the IPv4 address it carries.
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  ['2001:2::', 48], ['2001:10::', 28], ['2001:20::', 28], ['3fff::', 20], ['5f00::', 16],
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** the eight 16-bit groups of an IPv6 address (net.isIP already said it is one) */
function v6Groups(addr: string): number[] {
  let a = addr.split('%')[0]!.toLowerCase();
  a = a.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, w: string, x: string, y: string, z: string) =>
    `${((Number(w) << 8) | Number(x)).toString(16)}:${((Number(y) << 8) | Number(z)).toString(16)}`,
  );
  const [head = '', tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
}

const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address carries, where it carries one: IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96, :: and ::1 aside), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96,
 * and the local-use 64:ff9b:1::/48 in its /96 form), 6to4 (2002::/16) and Teredo (2001::/32, the
 * client's address, stored inverted). Null when it carries none; 'unknown' for a local-use NAT64
 * address in another form, whose IPv4 address cannot be told apart from the prefix.
 */
export function embeddedIpv4(addr: string): string | null | 'unknown' {
  const g = v6Groups(addr);
  const zero = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (zero(0, 6) && !(g[6] === 0 && (g[7] === 0 || g[7] === 1))) return v4(g[6]!, g[7]!);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return zero(3, 6) ? v4(g[6]!, g[7]!) : 'unknown';
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  if (g[0] === 0x2001 && g[1] === 0) return v4(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  return null;
}

/** loopback, private, link-local, CGNAT, documentation, multicast and reserved ranges, v4 and v6 */
export function isPrivateAddress(addr: string): boolean {
  const family = isIP(addr);
  if (family === 4) return blocked.check(addr, 'ipv4');
  if (family !== 6) return true; // not an address: never connect to it unchecked
  const carried = embeddedIpv4(addr);
  if (carried === 'unknown') return true;
  if (carried !== null) return blocked.check(carried, 'ipv4');
  return blocked.check(v6Groups(addr).map((x) => x.toString(16)).join(':'), 'ipv6');
}
