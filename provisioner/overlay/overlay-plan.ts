// What one host's part of the accounts' overlays should be (docs/networking.md, "Design"): for each
// account with a globally-networked pod running here, a network namespace of the account's own on
// the host holding a VXLAN device (the account's VXLAN id), one veth per local pod (its other end is
// `podnet1` in the pod), and a static route, neighbour and forwarding entry per pod of the account on
// another host. Pure: the store's records and the containers observed in, the plan out. Every name
// is derived (hashes of ids), every value a validated address, MAC or number; nothing a user wrote.
import { createHash } from 'node:crypto';
import type { GlobalNetworkSettings, HostRecord, PodRecord } from '../../model/index.ts';
import { ipv4ToNumber, numberToIpv4, resolverAddress } from '../../model/index.ts';

/** the overlay's UDP port (IANA's VXLAN port); hosts open it to each other, pods never reach it */
export const VXLAN_PORT = 4789;
/** a 1500-byte underlay less VXLAN's 50 bytes; podnet1 and the VXLAN devices use it */
export const OVERLAY_MTU = 1450;
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

/** the pods that are on the overlay: turned on, addressed, meant to run, placed */
export const onOverlay = (p: PodRecord): boolean =>
  p.globalNetworking === true && !!p.overlayIp && p.desiredStatus === 'RUNNING' && p.allocated && !!p.hostId && p.status !== 'TERMINATED';

/** an IPv4 address written canonically, or null */
const canonical = (addr: string | null | undefined): string | null => {
  const n = addr ? ipv4ToNumber(addr) : null;
  return n === null ? null : numberToIpv4(n);
};

export interface PlanInput {
  host: HostRecord;
  settings: GlobalNetworkSettings;
  /** every pod of every account with a pod on this host (the plan picks those on the overlay) */
  pods: PodRecord[];
  /** VXLAN ids of those accounts */
  vnis: ReadonlyMap<string, number>;
  /** the fleet's hosts by id (their underlay addresses) */
  hosts: ReadonlyMap<string, HostRecord>;
  /** running containers here: pod id → main process id */
  pids: ReadonlyMap<string, number>;
  /** running containers here: pod id → the host file that is its /etc/resolv.conf */
  resolvConfs?: ReadonlyMap<string, string>;
}

export function planHostOverlay({ host, settings, pods, vnis, hosts, pids, resolvConfs }: PlanInput): HostOverlayPlan | null {
  const underlay = canonical(host.address);
  const base = {
    nsPrefix: namespacePrefix(host.id),
    underlay: underlay ?? '',
    cidr: settings.range.cidr,
    gateway: resolverAddress(settings.range),
    mtu: OVERLAY_MTU,
    port: VXLAN_PORT,
    domain: settings.internalDomain,
  };
  // a host enrolled by name: no overlay here until it has an address the others reach (docs/networking.md)
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
      const addr = canonical(other?.address);
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
  return { ...base, accounts };
}
