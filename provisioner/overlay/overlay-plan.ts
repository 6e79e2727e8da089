// What one host's part of the accounts' overlays should be (docs/networking.md, "Design"): for each
// account with a globally-networked pod running here, a network namespace of the account's own on
// the host holding a VXLAN device (the account's VXLAN id), one veth per local pod (its other end is
// `podnet1` in the pod), and a static route, neighbour and forwarding entry per pod of the account on
// another host; and, when the global network spans data centers, the host's WireGuard tunnel to the
// other data centers' hosts (overlay-wireguard.ts) and podnet1's MTU for the whole fleet (overlayMtu).
// Pure: the store's records and the containers observed in, the plan out. Every name is derived
// (hashes of ids), every value a validated address, MAC, key or number; nothing a user wrote.
import { createHash } from 'node:crypto';
import type { GlobalNetworkSettings, HostRecord, PodRecord } from '../../model/index.ts';
import { canonicalIpv4 as canonical, hostUnderlay, ipv4ToNumber, OVERLAY_MTU_MAX, OVERLAY_MTU_MIN, resolverAddress } from '../../model/index.ts';

/** the overlay's UDP port (IANA's VXLAN port); hosts open it to each other, pods never reach it */
export const VXLAN_PORT = 4789;
/** WireGuard's port between data centers (its usual one); hosts of different data centers open it to each other */
export const WIREGUARD_PORT = 51820;
/** what VXLAN adds to a frame (outer IPv4 20, UDP 8, VXLAN 8, inner Ethernet 14) */
export const VXLAN_OVERHEAD = 50;
/** what WireGuard adds to a packet, as wg-quick counts it (outer IPv6 40, UDP 8, WireGuard 32) */
export const WIREGUARD_OVERHEAD = 80;
/** the underlay MTU assumed for a host that did not report its own yet */
export const DEFAULT_UNDERLAY_MTU = 1500;
/** the name of the overlay interface inside every pod (as on the public cloud: NCCL_SOCKET_IFNAME=podnet1) */
export const POD_INTERFACE = 'podnet1';

export interface LocalPodPlan {
  podId: string;
  ip: string;
  mac: string;
  /** the veth end in the account's namespace */
  veth: string;
  /** its peer's name until it is renamed podnet1 inside the pod */
  peer: string;
  /** the container's process: its network namespace */
  pid: number;
  /** the host file that is the pod's /etc/resolv.conf (null: Docker did not say; the pod gets no internal DNS) */
  resolvConf: string | null;
}

export interface RemotePodPlan {
  podId: string;
  ip: string;
  /** the underlay address of the host it runs on */
  host: string;
  /** that host's VXLAN device MAC for this account */
  mac: string;
}

export interface AccountOverlayPlan {
  accountId: string;
  vni: number;
  /** the account's namespace on this host (under /var/run/netns) */
  ns: string;
  /** its VXLAN device */
  vxlan: string;
  vtepMac: string;
  local: LocalPodPlan[];
  remote: RemotePodPlan[];
}

/** The host's WireGuard tunnel to the hosts of the other data centers (overlay-wireguard.ts). */
export interface TunnelPlan {
  /** its UDP port */
  port: number;
  /** the device's MTU: a VXLAN packet of a full podnet1 frame fits (podnet1's MTU + VXLAN_OVERHEAD) */
  mtu: number;
  /** the other data centers' hosts whose public key is known: each a peer, endpoint and allowed address its own */
  peers: { address: string; publicKey: string }[];
  /** every other data center's host: VXLAN to it goes through the tunnel or nowhere, and none comes in from it around the tunnel */
  closed: string[];
}

export interface HostOverlayPlan {
  /** namespaces of this host start with it (what is stale is found by it) */
  nsPrefix: string;
  /** the host's own underlay address (VXLAN `local`) */
  underlay: string;
  cidr: string;
  /** the pods' gateway (and resolver) address, on every pod's veth in the account's namespace */
  gateway: string;
  mtu: number;
  port: number;
  /** GPUFLEET_INTERNAL_DOMAIN: every pod of an account here resolves `<pod id>.<domain>` of the account's pods */
  domain: string;
  /** the host's WireGuard device (`wgf` + 12 hex; not `gf…`: the VXLAN guard drops UDP 4789 from `gf+` interfaces): the tunnel's, or the one to remove when there is none */
  tunnelDevice: string;
  /** null: no other data center in the global network, or no overlay pod here (a tunnel in place is removed) */
  tunnel: TunnelPlan | null;
  accounts: AccountOverlayPlan[];
}

const hex = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex');
const mac = (first: string, h: string) => [first, ...(h.slice(0, 10).match(/../g) ?? [])].join(':');

export const namespacePrefix = (hostId: string) => `gfo-${hex('host', hostId).slice(0, 8)}-`;
export const accountNamespace = (hostId: string, accountId: string) => `${namespacePrefix(hostId)}${hex('account', accountId).slice(0, 12)}`;
/** `gfx` + 12 hex: 15 characters, Linux's limit; unique on the host while it is still in the root namespace */
export const vxlanDevice = (hostId: string, accountId: string) => `gfx${hex('vxlan', hostId, accountId).slice(0, 12)}`;
/** locally administered unicast MACs: 02:… for VXLAN devices, 0a:… for pods */
export const vtepMac = (hostId: string, accountId: string) => mac('02', hex('vtep', hostId, accountId));
export const podMac = (podId: string) => mac('0a', hex('pod', podId));
export const podVeth = (podId: string) => `gfp${hex('veth', podId).slice(0, 12)}`;
export const podPeer = (podId: string) => `gfq${hex('veth', podId).slice(0, 12)}`;
/** the host's WireGuard device: one per host, `wgf` + 12 hex */
export const wireguardDevice = (hostId: string) => `wgf${hex('wireguard', hostId).slice(0, 12)}`;

/** the pods that are on the overlay: turned on, addressed, meant to run, placed */
export const onOverlay = (p: PodRecord): boolean =>
  p.globalNetworking === true && !!p.overlayIp && p.desiredStatus === 'RUNNING' && p.allocated && !!p.hostId && p.status !== 'TERMINATED';

/** a host of the global network: it has an overlay address the others reach (model/rules/host-underlay.ts) and its data center is not taken out */
export const inGlobalNetwork = (h: HostRecord, settings: GlobalNetworkSettings): boolean =>
  hostUnderlay(h) !== null && !settings.excludedDataCenters.includes(h.dataCenterId);

/**
 * podnet1's MTU, the same on every host (docs/networking.md, "MTU"): GPUFLEET_OVERLAY_MTU, or the
 * smallest underlay MTU of the global network's hosts (DEFAULT_UNDERLAY_MTU for one that did not
 * report it) less VXLAN's overhead, and less WireGuard's too once the global network spans more than
 * one data center. One value for the fleet: a pod's packets fit every path it may take, within its data
 * center or across, today or after a move, so a full-size packet with DF set is never lost on the way.
 */
export function overlayMtu(settings: GlobalNetworkSettings, hosts: Iterable<HostRecord>): number {
  if (settings.overlayMtu !== undefined) return settings.overlayMtu;
  const members = [...hosts].filter((h) => inGlobalNetwork(h, settings));
  const underlays = members.map((h) => h.overlay?.underlayMtu ?? DEFAULT_UNDERLAY_MTU);
  const underlay = underlays.length === 0 ? DEFAULT_UNDERLAY_MTU : Math.min(...underlays);
  const spans = new Set(members.map((h) => h.dataCenterId)).size > 1;
  const mtu = underlay - VXLAN_OVERHEAD - (spans ? WIREGUARD_OVERHEAD : 0);
  return Math.min(OVERLAY_MTU_MAX, Math.max(OVERLAY_MTU_MIN, mtu));
}

/** the tunnel of `host` to the other data centers' hosts of the global network, or null when there are none */
export function planTunnel(host: HostRecord, settings: GlobalNetworkSettings, hosts: Iterable<HostRecord>, mtu: number): TunnelPlan | null {
  const others = [...hosts].filter((h) => h.id !== host.id && h.dataCenterId !== host.dataCenterId && inGlobalNetwork(h, settings));
  if (others.length === 0 || !inGlobalNetwork(host, settings)) return null;
  const byAddress = (a: { address: string }, b: { address: string }) => ipv4ToNumber(a.address)! - ipv4ToNumber(b.address)!;
  const peers = others
    .filter((h) => !!h.overlay?.wireguardPublicKey)
    .map((h) => ({ address: hostUnderlay(h)!, publicKey: h.overlay!.wireguardPublicKey! }))
    .sort(byAddress);
  const closed = [...new Set(others.map((h) => hostUnderlay(h)!))].sort((a, b) => byAddress({ address: a }, { address: b }));
  return { port: WIREGUARD_PORT, mtu: mtu + VXLAN_OVERHEAD, peers, closed };
}

export interface PlanInput {
  host: HostRecord;
  settings: GlobalNetworkSettings;
  /** every pod of every account with a pod on this host (the plan picks those on the overlay) */
  pods: PodRecord[];
  /** VXLAN ids of those accounts */
  vnis: ReadonlyMap<string, number>;
  /** the fleet's hosts by id (their underlay addresses, MTUs, data centers and WireGuard keys) */
  hosts: ReadonlyMap<string, HostRecord>;
  /** running containers here: pod id → main process id */
  pids: ReadonlyMap<string, number>;
  /** running containers here: pod id → the host file that is its /etc/resolv.conf */
  resolvConfs?: ReadonlyMap<string, string>;
}

export function planHostOverlay({ host, settings, pods, vnis, hosts, pids, resolvConfs }: PlanInput): HostOverlayPlan | null {
  const underlay = hostUnderlay(host);
  const mtu = overlayMtu(settings, hosts.values());
  const base = {
    nsPrefix: namespacePrefix(host.id),
    underlay: underlay ?? '',
    cidr: settings.range.cidr,
    gateway: resolverAddress(settings.range),
    mtu,
    port: VXLAN_PORT,
    domain: settings.internalDomain,
    tunnelDevice: wireguardDevice(host.id),
  };
  // no address known for the overlay yet (a host enrolled by name before a pass read its own; docs/networking.md)
  if (!underlay) return null;
  const byAccount = new Map<string, PodRecord[]>();
  for (const p of pods.filter(onOverlay)) byAccount.set(p.accountId, [...(byAccount.get(p.accountId) ?? []), p]);
  const accounts: AccountOverlayPlan[] = [];
  for (const [accountId, list] of [...byAccount].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const vni = vnis.get(accountId);
    if (vni === undefined) continue;
    const local = list
      .filter((p) => p.hostId === host.id && (pids.get(p.id) ?? 0) > 0)
      .map((p) => ({
        podId: p.id,
        ip: canonical(p.overlayIp)!,
        mac: podMac(p.id),
        veth: podVeth(p.id),
        peer: podPeer(p.id),
        pid: pids.get(p.id)!,
        resolvConf: resolvConfs?.get(p.id) ?? null,
      }))
      .filter((p) => p.ip !== null)
      .sort((a, b) => (a.podId < b.podId ? -1 : 1));
    if (local.length === 0) continue;
    const remote: RemotePodPlan[] = [];
    for (const p of list) {
      if (p.hostId === host.id) continue;
      const other = hosts.get(p.hostId!);
      const addr = other ? hostUnderlay(other) : null;
      const ip = canonical(p.overlayIp);
      if (!other || !addr || !ip) continue;
      remote.push({ podId: p.id, ip, host: addr, mac: vtepMac(other.id, accountId) });
    }
    remote.sort((a, b) => (a.ip < b.ip ? -1 : 1));
    accounts.push({
      accountId,
      vni,
      ns: accountNamespace(host.id, accountId),
      vxlan: vxlanDevice(host.id, accountId),
      vtepMac: vtepMac(host.id, accountId),
      local,
      remote,
    });
  }
  // the tunnel only while this host has overlay pods: a host without them neither sends nor takes VXLAN
  const tunnel = accounts.length === 0 ? null : planTunnel(host, settings, hosts.values(), mtu);
  return { ...base, tunnel, accounts };
}
