// The overlay's address range (GPUFLEET_OVERLAY_CIDR, docs/networking.md): IPv4 ranges as numbers,
// whether two overlap, and which addresses of the range a pod may get. Pure.

export interface Ipv4Range {
  /** the range as written, normalised (`10.200.0.0/13`) */
  cidr: string;
  /** first address, as an unsigned 32-bit number */
  base: number;
  bits: number;
  /** number of addresses */
  size: number;
}

/** the default overlay range: inside 10/8, clear of Docker's default pools (172.17–172.31/16, 192.168/16) */
export const DEFAULT_OVERLAY_CIDR = '10.200.0.0/13';
export const DEFAULT_INTERNAL_DOMAIN = 'runpod.internal';

/**
 * Docker's default address pools (172.17.0.0/16 … 172.31.0.0/16 and 192.168.0.0/16 in /20s): the
 * ranges an engine takes its bridges from unless its daemon.json says otherwise.
 */
export const DOCKER_DEFAULT_POOLS: readonly string[] = ['172.17.0.0/16', '172.18.0.0/15', '172.20.0.0/14', '172.24.0.0/13', '192.168.0.0/16'];

export function ipv4ToNumber(addr: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p, i) => p > 255 || (m[i + 1]!.length > 1 && m[i + 1]!.startsWith('0')))) return null;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export const numberToIpv4 = (n: number): string => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** `a.b.c.d/n` (a host address with its prefix is taken as its network); null when malformed */
export function parseIpv4Range(text: string): Ipv4Range | null {
  const m = /^([0-9.]+)\/(\d{1,2})$/.exec(text.trim());
  if (!m) return null;
  const addr = ipv4ToNumber(m[1]!);
  const bits = Number(m[2]);
  if (addr === null || bits > 32) return null;
  const size = 2 ** (32 - bits);
  const base = Math.floor(addr / size) * size;
  return { cidr: `${numberToIpv4(base)}/${bits}`, base, bits, size };
}

export const rangesOverlap = (a: Ipv4Range, b: Ipv4Range): boolean => a.base < b.base + b.size && b.base < a.base + a.size;

/**
 * The overlay range from GPUFLEET_OVERLAY_CIDR: a private IPv4 range of at least 16 addresses that no
 * Docker default pool overlaps (an engine would give a bridge the same addresses). Throws a message
 * for the operator otherwise.
 */
export function parseOverlayCidr(text: string | undefined): Ipv4Range {
  const value = text?.trim() || DEFAULT_OVERLAY_CIDR;
  const range = parseIpv4Range(value);
  if (!range) throw new Error(`GPUFLEET_OVERLAY_CIDR=${value} is not an IPv4 range (a.b.c.d/n)`);
  if (range.bits > 28) throw new Error(`GPUFLEET_OVERLAY_CIDR=${value} is smaller than a /28`);
  if (range.bits < 8) throw new Error(`GPUFLEET_OVERLAY_CIDR=${value} is larger than a /8`);
  const privateRanges = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'].map((r) => parseIpv4Range(r)!);
  if (!privateRanges.some((p) => range.base >= p.base && range.base + range.size <= p.base + p.size))
    throw new Error(`GPUFLEET_OVERLAY_CIDR=${value} is not inside a private range (10/8, 172.16/12, 192.168/16, 100.64/10)`);
  const clash = DOCKER_DEFAULT_POOLS.find((p) => rangesOverlap(range, parseIpv4Range(p)!));
  if (clash) throw new Error(`GPUFLEET_OVERLAY_CIDR=${value} overlaps Docker's default address pool ${clash}: pick a range Docker does not give its bridges`);
  return range;
}

/**
 * The address reserved on every host for the account's resolver (internal DNS, docs/networking.md):
 * the range's first usable address. Pods never get it, nor the network or broadcast address.
 */
export const resolverAddress = (range: Ipv4Range): string => numberToIpv4(range.base + 1);

/** whether `addr` may be given to a pod: inside the range, not its network, resolver or broadcast address */
export function assignable(range: Ipv4Range, addr: number): boolean {
  return addr > range.base + 1 && addr < range.base + range.size - 1;
}

/** a pod address of the range drawn by `random` (0 ≤ r < 1) */
export function randomAssignable(range: Ipv4Range, random: number): string {
  const usable = range.size - 3;
  return numberToIpv4(range.base + 2 + Math.floor(random * usable));
}

/** internal DNS names: `<pod id>.<domain>`; the domain as GPUFLEET_INTERNAL_DOMAIN gives it, checked */
export function parseInternalDomain(text: string | undefined): string {
  const value = (text?.trim() || DEFAULT_INTERNAL_DOMAIN).replace(/\.+$/, '').toLowerCase();
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  if (value.length > 200 || !value.split('.').every((l) => label.test(l)))
    throw new Error(`GPUFLEET_INTERNAL_DOMAIN=${text} is not a DNS name (letters, digits and hyphens, dot-separated)`);
  return value;
}

/** GPUFLEET_GLOBAL_NETWORK_EXCLUDE=DC1,DC2: the data centers outside the global network */
export const parseExcludedDataCenters = (text: string | undefined): string[] =>
  [...new Set((text ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0))];

/** the operator's settings of the global network (core/config.ts reads them) */
export interface GlobalNetworkSettings {
  /** GPUFLEET_OVERLAY_CIDR */
  range: Ipv4Range;
  /** GPUFLEET_INTERNAL_DOMAIN */
  internalDomain: string;
  /** GPUFLEET_GLOBAL_NETWORK_EXCLUDE */
  excludedDataCenters: string[];
  /** GPUFLEET_OVERLAY_MTU: podnet1's MTU on every host; absent: derived from the hosts' underlay (overlay-plan.ts overlayMtu) */
  overlayMtu?: number;
}

/** the MTUs podnet1 may have: IPv4's 576 floor (every host must take it) to a jumbo frame's 9000 */
export const OVERLAY_MTU_MIN = 576;
export const OVERLAY_MTU_MAX = 9000;

/** GPUFLEET_OVERLAY_MTU: a whole number of bytes within OVERLAY_MTU_MIN..OVERLAY_MTU_MAX, or unset */
export function parseOverlayMtu(text: string | undefined): number | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  const n = /^[0-9]{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= OVERLAY_MTU_MIN && n <= OVERLAY_MTU_MAX))
    throw new Error(`GPUFLEET_OVERLAY_MTU=${text} is not an MTU in bytes from ${OVERLAY_MTU_MIN} to ${OVERLAY_MTU_MAX}`);
  return n;
}

export function globalNetworkSettings(env: { overlayCidr?: string; internalDomain?: string; exclude?: string; overlayMtu?: string } = {}): GlobalNetworkSettings {
  const overlayMtu = parseOverlayMtu(env.overlayMtu);
  return {
    range: parseOverlayCidr(env.overlayCidr),
    internalDomain: parseInternalDomain(env.internalDomain),
    excludedDataCenters: parseExcludedDataCenters(env.exclude),
    ...(overlayMtu === undefined ? {} : { overlayMtu }),
  };
}
