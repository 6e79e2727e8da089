// Which registries a tenant's image may name (docs/security.md, "Registries a tenant may name"). A
// pull makes the host's Docker daemon connect wherever the image says, so a registry on a loopback,
// private, link-local or otherwise special address (the host's own services, the cloud's metadata
// service) or a local name (`localhost`, `*.local`, …) is refused, unless the operator allows that
// exact registry (GPUFLEET_ALLOWED_REGISTRIES). This file is the part judged from the text alone;
// names are resolved before the pull (provisioner/registry-guard.ts).
import { isIP } from 'node:net';
import { isPrivateAddress } from './network-address.ts';

export interface ImageRegistry {
  /** `host[:port]` as the image names it, lower case: what GPUFLEET_ALLOWED_REGISTRIES entries match */
  server: string;
  /** the host, an IPv6 literal without its brackets */
  host: string;
}

/**
 * The registry an image names, or null for Docker Hub. docker's rule (distribution/reference): the
 * part before the first `/` is a registry when it has a `.` or a `:`, or is `localhost`.
 */
export function imageRegistry(image: string): ImageRegistry | null {
  const slash = image.indexOf('/');
  if (slash < 0) return null;
  const first = image.slice(0, slash);
  if (!first.includes('.') && !first.includes(':') && first !== 'localhost') return null;
  const server = first.toLowerCase();
  const host = server.startsWith('[') ? server.slice(1, server.indexOf(']')) : server.replace(/:\d+$/, '');
  return { server, host };
}

/** GPUFLEET_ALLOWED_REGISTRIES: `host[:port],…`, each an exact registry (lower case; IPv6 in brackets). */
export function parseAllowedRegistries(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0);
}

/** entries of the allow list that no image reference could name (a scheme, a path, a space) */
export function malformedAllowedRegistries(allowed: readonly string[]): string[] {
  return allowed.filter((s) => !/^(?:\[[0-9a-f:]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/.test(s));
}

/** Names no public registry has: resolved by the host itself (RFC 6761, RFC 6762, ICANN's .internal). */
const LOCAL_NAME = /(?:^|\.)(?:localhost|local|internal|home\.arpa)$/;

/**
 * Why a registry host may not be pulled from, judged from its text alone, or null. An IP literal is
 * judged by the address rule (model/rules/network-address.ts); a host whose last label is a number is an
 * address in a form only some resolvers read (`127.1`, `2130706433`, `0x7f.1`), refused unless it is
 * a plain dotted quad.
 */
export function registryHostRefusal(host: string): string | null {
  const family = isIP(host);
  if (family !== 0) return isPrivateAddress(host) ? 'a loopback, private, link-local or reserved address' : null;
  if (/^(?:\d+|0x[0-9a-f]*)$/.test(host.slice(host.lastIndexOf('.') + 1))) return 'a numeric address that is not a plain dotted quad';
  if (LOCAL_NAME.test(host)) return 'a local name';
  return null;
}

/**
 * Why a tenant may not name this image's registry (an `errors` line's message), or null: Docker Hub
 * and registries in `allowed` (exact `host[:port]`) always pass.
 */
export function imageRegistryRefusal(image: string, allowed: readonly string[]): string | null {
  const reg = imageRegistry(image);
  if (!reg || allowed.includes(reg.server)) return null;
  const why = registryHostRefusal(reg.host);
  return why === null
    ? null
    : `names the registry ${reg.server}, ${why}, which tenants may not pull from (the operator can allow a registry: GPUFLEET_ALLOWED_REGISTRIES)`;
}
