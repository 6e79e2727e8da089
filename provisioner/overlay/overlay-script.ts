// The plan of overlay-plan.ts as one shell script for the host (`sh -s`, the script on stdin), which
// makes the host's kernel state match it and changes nothing that already does (docs/networking.md):
// namespaces, devices and veths are made only when missing, routes, neighbours and forwarding entries
// are `replace`d (a no-op when equal), firewall rules are restored only when they differ, and what the
// plan no longer has is removed. Entries are static (no learning, no ARP across hosts), so traffic
// keeps flowing while the control plane is down. Every word that reaches the script is checked here
// against a grammar (names, addresses, MACs, numbers) first; nothing a user wrote reaches it.
import { createHash } from 'node:crypto';
import { ipv4ToNumber, parseIpv4Range } from '../../model/index.ts';
import { check, intWord, ipWord, podIdWord } from './overlay-words.ts';
import type { HostOverlayPlan } from './overlay-plan.ts';
import { accountDnsLines, dnsPrelude, staleDnsLines } from './overlay-dns.ts';
import { tunnelLines, underlayMtuLines } from './overlay-wireguard.ts';

/** printed (on stdout) for each thing the script had to make: tests and logs read them */
export const MADE = 'gpufleet-overlay-made';
/** printed on stderr for a step that failed; the script goes on with the others and exits 1 */
export const FAILED = 'gpufleet-overlay-failed';

const NS = /^gfo-[0-9a-f]{8}-[0-9a-f]{12}$/;
const NS_PREFIX = /^gfo-[0-9a-f]{8}-$/;
const DEV = /^gf[xpq][0-9a-f]{12}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

const ip = (v: string) => ipWord(v);
const word = (re: RegExp, what: string) => (v: string) => (check(re.test(v), what, v), v);
const int = (min: number, max: number, what: string) => (v: number) => intWord(min, max, what, v);
const ns = word(NS, 'namespace name');
const dev = word(DEV, 'device name');
const mac = word(MAC, 'MAC address');

/** the filter table of an account's namespace: what each pod may send, from its own address and MAC only */
function firewall(plan: HostOverlayPlan, a: HostOverlayPlan['accounts'][number]): string[] {
  return [
    '-P INPUT DROP',
    '-P FORWARD DROP',
    '-P OUTPUT ACCEPT',
    '-A INPUT -i lo -j ACCEPT',
    ...a.local.map((p) => `-A FORWARD -i ${dev(p.veth)} -s ${ip(p.ip)}/32 -m mac --mac-source ${mac(p.mac)} -j ACCEPT`),
    `-A FORWARD -i ${dev(a.vxlan)} -o gfp+ -d ${plan.cidr} -j ACCEPT`,
  ];
}

export function overlayScript(plan: HostOverlayPlan): string {
  const cidr = parseIpv4Range(plan.cidr);
  check(cidr !== null && cidr.cidr === plan.cidr, 'range', plan.cidr);
  check(NS_PREFIX.test(plan.nsPrefix), 'namespace prefix', plan.nsPrefix);
  const gw = ip(plan.gateway);
  const mtu = int(576, 9000, 'MTU')(plan.mtu);
  const port = int(1, 65535, 'port')(plan.port);
  const lines: string[] = [
    'export LC_ALL=C',
    'rc=0',
    `made() { echo "${MADE} $*"; }`,
    `failed() { echo "${FAILED} $*" >&2; rc=1; }`,
    'inn() { n=$1; shift; nsenter --net=/var/run/netns/$n "$@"; }',
    ...dnsPrelude(FAILED),
    // the guard against pods sending VXLAN is not here: every host gets it, overlay or not (overlay-guard.ts)
  ];
  const wantedNs = plan.accounts.map((a) => ns(a.ns));
  // namespaces of this host that the plan no longer has: their devices (and the pods' podnet1) go with them
  lines.push(
    `for f in /var/run/netns/${plan.nsPrefix}*; do [ -e "$f" ] || continue; n=\${f##*/}; case " ${wantedNs.join(' ')} " in *" $n "*) ;; *) ip netns del "$n" && made removed-namespace "$n";; esac; done`,
  );
  // the internal DNS of accounts no longer here (their pods' resolvers, resolv.conf put back)
  lines.push(...staleDnsLines(plan, wantedNs));
  if (plan.accounts.length > 0) ip(plan.underlay);
  // the underlay's MTU for the control plane (podnet1's MTU is derived from every host's), then the tunnel
  // between data centers, before any VXLAN entry: VXLAN to another data center never leaves in the clear
  if (ipv4ToNumber(plan.underlay) !== null) lines.push(...underlayMtuLines(plan.underlay));
  lines.push(...tunnelLines(plan));
  for (const a of plan.accounts) {
    const n = ns(a.ns);
    const vx = dev(a.vxlan);
    const vni = int(1, 2 ** 24 - 1, 'VXLAN id')(a.vni);
    lines.push(
      `# account overlay ${n}`,
      `if [ ! -e /var/run/netns/${n} ]; then ip netns add ${n} && made namespace ${n} || failed namespace ${n}; fi`,
      `inn ${n} ip link set lo up`,
      `inn ${n} sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'`,
      // a device made for another address of the host (its overlay address changed, docs/networking.md) is made again
      `if inn ${n} ip -d link show ${vx} 2>/dev/null | grep -q ' vxlan id .* local ' && ! inn ${n} ip -d link show ${vx} | grep -q ' local ${plan.underlay} '; then inn ${n} ip link del ${vx} && made vxlan-readdressed ${vx}; fi`,
      // made in this (the host's) namespace so its UDP socket is the host's, then moved into the account's
      `if ! inn ${n} ip link show ${vx} >/dev/null 2>&1; then ip link del ${vx} 2>/dev/null; ` +
        `{ ip link add ${vx} type vxlan id ${vni} dstport ${port} local ${plan.underlay} nolearning && ip link set ${vx} netns ${n} && made vxlan ${vx}; } || failed vxlan ${vx}; fi`,
      `inn ${n} ip link set ${vx} address ${mac(a.vtepMac)} mtu ${mtu} up || failed vxlan-up ${vx}`,
    );
    for (const p of a.local) {
      podIdWord(p.podId);
      const v = dev(p.veth);
      const q = dev(p.peer);
      const pid = int(1, 2 ** 22, 'pid')(p.pid);
      const addr = ip(p.ip);
      const pod = `nsenter -t ${pid} -n`;
      lines.push(
        `if ! inn ${n} ip link show ${v} >/dev/null 2>&1; then ` +
          `{ inn ${n} ip link add ${v} mtu ${mtu} type veth peer name ${q} mtu ${mtu} && inn ${n} ip link set ${q} netns ${pid} && ` +
          `${pod} ip link set ${q} name podnet1 address ${mac(p.mac)} && ${pod} ip link set podnet1 up && ` +
          `${pod} ip addr add ${addr}/32 dev podnet1 && ${pod} ip route add ${gw}/32 dev podnet1 scope link && ` +
          `${pod} ip route add ${plan.cidr} via ${gw} dev podnet1 && made podnet1 ${p.podId}; } || { failed podnet1 ${p.podId}; inn ${n} ip link del ${v} 2>/dev/null; }; fi`,
        `inn ${n} ip addr replace ${gw}/32 dev ${v} && inn ${n} ip link set ${v} mtu ${mtu} up && inn ${n} ip route replace ${addr}/32 dev ${v} || failed route ${p.podId}`,
        // the fleet's MTU may have changed since podnet1 was made (a second data center, a host's underlay): set live
        `${pod} ip link set podnet1 mtu ${mtu} 2>/dev/null || failed podnet1-mtu ${p.podId}`,
      );
    }
    // veths of pods that left the overlay (their podnet1 goes with them)
    const localVeths = a.local.map((p) => p.veth);
    lines.push(
      `for v in $(inn ${n} ip -o link show | sed -n 's/^[0-9]*: \\(gfp[0-9a-f]*\\)@.*/\\1/p'); do case " ${localVeths.join(' ')} " in *" $v "*) ;; *) inn ${n} ip link del "$v" && made removed-veth "$v";; esac; done`,
    );
    for (const r of a.remote)
      lines.push(
        `inn ${n} ip route replace ${ip(r.ip)}/32 dev ${vx} && inn ${n} ip neigh replace ${r.ip} lladdr ${mac(r.mac)} dev ${vx} nud permanent && ` +
          `inn ${n} bridge fdb replace ${r.mac} dev ${vx} dst ${ip(r.host)} self permanent || failed remote ${r.ip}`,
      );
    const remoteIps = a.remote.map((r) => r.ip);
    const remoteMacs = [...new Set(a.remote.map((r) => r.mac))];
    lines.push(
      `for d in $(inn ${n} ip -4 route show dev ${vx} | sed -n 's#^\\([0-9.]*\\)\\(/32\\)\\{0,1\\} .*#\\1#p'); do case " ${remoteIps.join(' ')} " in *" $d "*) ;; *) inn ${n} ip route del "$d/32" dev ${vx}; inn ${n} ip neigh del "$d" dev ${vx} 2>/dev/null; made removed-route "$d";; esac; done`,
      `inn ${n} bridge fdb show dev ${vx} | while read m _ dst rest; do case " ${remoteMacs.join(' ')} " in *" $m "*) ;; *) [ "$_" = dst ] && inn ${n} bridge fdb del "$m" dev ${vx} dst "$dst" self && echo "${MADE} removed-fdb $m";; esac; done`,
    );
    lines.push(...accountDnsLines(plan, a));
    // restored only when the version stamp (a hash of the rules) is not the one in place
    const rules = firewall(plan, a);
    const stamp = `gpufleet-${createHash('sha256').update(rules.join('\n')).digest('hex').slice(0, 16)}`;
    const table = ['*filter', ...rules.map((r) => r.replace(/^-P (\w+) (\w+)$/, ':$1 $2 [0:0]')), `-A OUTPUT -m comment --comment ${stamp}`, 'COMMIT'];
    lines.push(
      `if ! inn ${n} iptables-save -t filter | grep -q -- ' ${stamp}'; then printf '%s\\n' ${table.map((l) => `'${l}'`).join(' ')} | inn ${n} iptables-restore && made firewall ${n} || failed firewall ${n}; fi`,
    );
  }
  lines.push('exit $rc');
  return `${lines.join('\n')}\n`;
}
