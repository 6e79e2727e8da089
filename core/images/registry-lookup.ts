// A registry's name resolved on the control plane, right before a host is told to pull from it: a
// name that leads to a loopback, private or link-local address is refused like an IP literal would
// be (model/rules/image-registry.ts), and so is one that does not resolve here (the host's resolver might
// lead it somewhere this one cannot see, such as a cloud's metadata name). Registries in the
// operator's allow list are not looked up. What a host's own resolver answers later, and where a
// registry redirects the daemon, no check here reaches: docs/security.md names the host egress rule.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { imageRegistry, imageRegistryRefusal, isPrivateAddress } from '../../model/index.ts';

/** every address a name resolves to */
export type RegistryLookup = (host: string) => Promise<{ address: string }[]>;

export const systemLookup: RegistryLookup = (host) => lookup(host, { all: true, verbatim: true });

/** how long a registry's name may take to resolve before the pull is refused */
export const REGISTRY_LOOKUP_TIMEOUT_MS = 5000;

/** the name's addresses, or null when it does not resolve in time */
export async function resolveRegistry(host: string, resolve: RegistryLookup = systemLookup, timeoutMs = REGISTRY_LOOKUP_TIMEOUT_MS): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const addrs = await Promise.race([
      resolve(host),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs))),
    ]);
    return addrs.length ? addrs.map((a) => a.address) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the host may not pull this image, in words a tenant may read (they name nothing the name's
 * resolver answered but whether it was private), or null. Docker Hub and allowed registries pass.
 */
export async function pullRefusal(image: string, allowed: readonly string[], resolve: RegistryLookup = systemLookup): Promise<string | null> {
  const reg = imageRegistry(image);
  if (!reg || allowed.includes(reg.server)) return null;
  // a record from before the rule (or written around the API) is judged here as well
  const byText = imageRegistryRefusal(image, allowed);
  if (byText !== null) return `refused by policy: the image ${byText}`;
  if (isIP(reg.host) !== 0) return null; // an address literal: the text rule judged it
  const addrs = await resolveRegistry(reg.host, resolve);
  if (addrs === null)
    return `refused by policy: the registry ${reg.server} does not resolve from the control plane, so where the host would connect cannot be checked`;
  if (addrs.some(isPrivateAddress))
    return `refused by policy: the registry ${reg.server} resolves to a loopback, private or link-local address (the operator can allow a registry: GPUFLEET_ALLOWED_REGISTRIES)`;
  return null;
}
