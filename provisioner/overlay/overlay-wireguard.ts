// The overlay script's lines for the host's WireGuard tunnel to the other data centers' hosts
// (docs/networking.md, "Between data centers"). The VXLAN entries stay as they are (static, to each
// host's address); what changes is the route their UDP takes: a policy rule sends only UDP to port 4789
// (and, for the kernel's reverse-path check, from it) to a table of its own, where each other data
// center's host is a route through the WireGuard device, or unreachable while its key is not known or
// the device is gone. The tunnel's own packets (UDP 51820) never match: they leave by the main table,
// so nothing loops. VXLAN from another data center's host that did not come through the tunnel is
// dropped. The key is made on the host (`wg genkey`) and only its public half is printed for the
// control plane; the private key is read from its file into `wg syncconf` there and never leaves it.
// The device is the kernel's where `ip link add … type wireguard` works, else Debian's `wireguard-go`
// (userspace, over /dev/net/tun), a daemon of its own that outlives the SSH session and the control plane.
// Every word is checked against a grammar here; nothing a user wrote reaches the script.
import { createHash } from 'node:crypto';
import { check as checkWord, intWord, ipWord } from './overlay-words.ts';
import type { HostOverlayPlan } from './overlay-plan.ts';
import { VXLAN_PORT } from './overlay-plan.ts';

/** printed (stdout) with the host's public key each run that has a tunnel */
export const WIREGUARD_KEY = 'gpufleet-overlay-wireguard-key';
/** printed (stdout) with the MTU of the interface holding the host's address */
export const UNDERLAY_MTU = 'gpufleet-overlay-underlay-mtu';
/** printed (stderr) when the host has neither the kernel's WireGuard nor wireguard-go */
export const WIREGUARD_MISSING = 'gpufleet-overlay-warn no-wireguard';
/** where each host keeps its private key (kept across reboots: its peers keep its public key) */
export const WIREGUARD_KEY_DIR = '/var/lib/gpufleet/wireguard';
/** wireguard-go's log, per device (cleared by a reboot) */
export const WIREGUARD_RUN_DIR = '/run/gpufleet/wireguard';
/** the routing table of VXLAN to other data centers, and the policy rules' preferences (to 4789, from 4789) */
export const TUNNEL_TABLE = 51820;
export const RULE_TO_VXLAN = 4789;
export const RULE_FROM_VXLAN = 4790;
/** the host's INPUT chain that drops VXLAN from other data centers' hosts arriving around the tunnel */
export const TUNNEL_GUARD_CHAIN = 'GPUFLEET-WG';
/** the fail-closed route's metric (the tunnel's own route has 0, so it wins while the device is up) */
const CLOSED_METRIC = 100;

/** a WireGuard key: base64 of 32 bytes (43 characters, the last of 16 possible, and `=`) */
const KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
export const isWireguardKey = (v: unknown): v is string => typeof v === 'string' && KEY.test(v);
const DEV = /^wgf[0-9a-f]{12}$/;
const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

const WHERE = 'overlay tunnel plan';
const check = (ok: boolean, what: string, value: unknown) => checkWord(ok, what, value, WHERE);
const ip = (v: string) => ipWord(v, WHERE);
const int = (min: number, max: number, what: string, v: number) => intWord(min, max, what, v, WHERE);

/**
 * What a run of the script reported about the host, read from its stdout and checked: the underlay's
 * MTU (null when not printed) and the public key (null when not printed: no tunnel this run). A line
 * that does not pass its grammar counts as not printed.
 */
export function readReport(stdout: string): { underlayMtu: number | null; wireguardPublicKey: string | null } {
  const value = (tag: string) => stdout.split('\n').find((l) => l.startsWith(`${tag} `))?.slice(tag.length + 1).trim() ?? null;
  const mtu = Number(value(UNDERLAY_MTU) ?? NaN);
  const key = value(WIREGUARD_KEY);
  return { underlayMtu: Number.isInteger(mtu) && mtu >= 576 && mtu <= 65535 ? mtu : null, wireguardPublicKey: isWireguardKey(key) ? key : null };
}

/** prints the MTU of the interface that holds `underlay` (none printed when no interface has it: an address behind NAT) */
export function underlayMtuLines(underlay: string): string[] {
  return [
    `ud=$(ip -o -4 addr show | while read _ d _ a _; do [ "\${a%/*}" = "${ip(underlay)}" ] && { echo "$d"; break; }; done)`,
    `[ -n "$ud" ] && um=$(ip -o link show dev "$ud" | sed -n 's/.* mtu \\([0-9]*\\) .*/\\1/p') && [ -n "$um" ] && echo "${UNDERLAY_MTU} $um"`,
  ];
}

/** the tunnel made to match plan.tunnel, or removed when it is null */
export function tunnelLines(plan: HostOverlayPlan): string[] {
  const w = plan.tunnelDevice;
  check(DEV.test(w), 'device name', w);
  const t = plan.tunnel;
  const vx = int(1, 65535, 'port', VXLAN_PORT);
  if (!t)
    return [
      `if ip link show ${w} >/dev/null 2>&1; then ip link del ${w} && made removed-wireguard ${w}; fi`,
      `while ip rule del pref ${RULE_TO_VXLAN} 2>/dev/null; do :; done; while ip rule del pref ${RULE_FROM_VXLAN} 2>/dev/null; do :; done`,
      `ip route flush table ${TUNNEL_TABLE} 2>/dev/null`,
      `if iptables -w 5 -n -L ${TUNNEL_GUARD_CHAIN} >/dev/null 2>&1; then while iptables -w 5 -D INPUT -j ${TUNNEL_GUARD_CHAIN} 2>/dev/null; do :; done; ` +
        `iptables -w 5 -F ${TUNNEL_GUARD_CHAIN} && iptables -w 5 -X ${TUNNEL_GUARD_CHAIN} && made removed-tunnel-guard; fi`,
    ];
  const port = int(1, 65535, 'port', t.port);
  const mtu = int(576, 9050, 'MTU', t.mtu);
  for (const p of t.peers) check(isWireguardKey(p.publicKey), 'WireGuard public key', p.publicKey);
  const key = `${WIREGUARD_KEY_DIR}/${w}.key`;
  const peers = t.peers.map((p) => `'[Peer]' 'PublicKey = ${p.publicKey}' 'Endpoint = ${ip(p.address)}:${port}' 'AllowedIPs = ${p.address}/32'`);
  const closed = t.closed.map(ip);
  const guard = [
    '*filter',
    `:${TUNNEL_GUARD_CHAIN} - [0:0]`,
    ...closed.map((a) => `-A ${TUNNEL_GUARD_CHAIN} -s ${a}/32 ! -i ${w} -p udp -m udp --dport ${vx} -j DROP`),
  ];
  // the chain is restored only when this stamp (a hash of its rules) is not the one in place
  const stamp = `gpufleet-${hash(guard.join('\n'))}`;
  guard.push(`-A ${TUNNEL_GUARD_CHAIN} -m comment --comment ${stamp} -j RETURN`, 'COMMIT');
  return [
    `# WireGuard to the other data centers' hosts (${w})`,
    // the key, made here once; only its public half is printed
    `if [ ! -s ${key} ]; then (umask 077 && mkdir -p ${WIREGUARD_KEY_DIR} && wg genkey > ${key}.new && mv -f ${key}.new ${key}) && made wireguard-key ${w} || failed wireguard-key ${w}; fi`,
    `wp=$(wg pubkey < ${key}) && echo "${WIREGUARD_KEY} $wp" || failed wireguard-key ${w}`,
    // first what keeps VXLAN to another data center from leaving in the clear: the rules and the unreachable routes
    `ip rule show pref ${RULE_TO_VXLAN} | grep -q 'lookup ${TUNNEL_TABLE}' || ip rule add pref ${RULE_TO_VXLAN} ipproto udp dport ${vx} lookup ${TUNNEL_TABLE} || failed tunnel-rule ${w}`,
    `ip rule show pref ${RULE_FROM_VXLAN} | grep -q 'lookup ${TUNNEL_TABLE}' || ip rule add pref ${RULE_FROM_VXLAN} ipproto udp sport ${vx} lookup ${TUNNEL_TABLE} || failed tunnel-rule ${w}`,
    ...closed.map((a) => `ip route replace unreachable ${a}/32 metric ${CLOSED_METRIC} table ${TUNNEL_TABLE} || failed tunnel-closed ${a}`),
    // the device: the kernel's, else wireguard-go (a daemon: its output to a file, so the SSH session ends)
    `if ! ip link show ${w} >/dev/null 2>&1; then ` +
      `if ip link add ${w} type wireguard 2>/dev/null; then made wireguard-kernel ${w}; ` +
      `elif command -v wireguard-go >/dev/null; then mkdir -p ${WIREGUARD_RUN_DIR} && setsid wireguard-go ${w} </dev/null >>${WIREGUARD_RUN_DIR}/${w}.log 2>&1 && made wireguard-go ${w} || failed wireguard ${w}; ` +
      `else echo '${WIREGUARD_MISSING}' >&2; failed wireguard ${w}; fi; fi`,
    // the whole configuration, replaced (peers added and removed, sessions of unchanged peers kept); the private key read here
    `{ printf '%s\\n' '[Interface]' "PrivateKey = $(cat ${key})" 'ListenPort = ${port}'${peers.length ? ` ${peers.join(' ')}` : ''}; } | wg syncconf ${w} /dev/stdin || failed wireguard-config ${w}`,
    `ip link set ${w} mtu ${mtu} up || failed wireguard-up ${w}`,
    ...t.peers.map((p) => `ip route replace ${p.address}/32 dev ${w} table ${TUNNEL_TABLE} || failed tunnel-route ${p.address}`),
    // routes of hosts no longer in another data center of the global network
    `for d in $(ip -4 route show table ${TUNNEL_TABLE} 2>/dev/null | sed -n 's#^\\(unreachable \\)\\{0,1\\}\\([0-9.]*\\)\\(/32\\)\\{0,1\\} .*#\\2#p' | sort -u); do ` +
      `case " ${closed.join(' ')} " in *" $d "*) ;; *) while ip route del "$d/32" table ${TUNNEL_TABLE} 2>/dev/null; do :; done; made removed-tunnel-route "$d";; esac; done`,
    // VXLAN from another data center's host only through the tunnel
    `if ! iptables -w 5 -S ${TUNNEL_GUARD_CHAIN} 2>/dev/null | grep -q -- ' ${stamp}'; then printf '%s\\n' ${guard.map((l) => `'${l}'`).join(' ')} | iptables-restore -w 5 -n && made tunnel-guard ${w} || failed tunnel-guard ${w}; fi`,
    `iptables -w 5 -C INPUT -j ${TUNNEL_GUARD_CHAIN} 2>/dev/null || iptables -w 5 -I INPUT 1 -j ${TUNNEL_GUARD_CHAIN} || failed tunnel-guard ${w}`,
  ];
}
