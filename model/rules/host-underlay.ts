// A host's address for the overlay (docs/networking.md, "A host's overlay address"): where the other
// hosts send its pods' VXLAN packets and the VXLAN device's `local`. The operator's `overlayAddress`
// when set (an address the host was seen to have); else the address it was enrolled with when that is
// an IPv4 address; else, for a host enrolled by name, the host's own address of the control plane's
// SSH connection (`SSH_CONNECTION`), as each reconcile pass reads it (`connectedAddress`). Null: none
// known yet (the host has no overlay until a pass read it).
import type { HostRecord } from '../records/host.ts';
import { ipv4ToNumber, numberToIpv4 } from './overlay-range.ts';

/** an IPv4 address written canonically, or null */
export const canonicalIpv4 = (addr: string | null | undefined): string | null => {
  const n = addr ? ipv4ToNumber(addr) : null;
  return n === null ? null : numberToIpv4(n);
};

export function hostUnderlay(h: Pick<HostRecord, 'address' | 'overlayAddress' | 'connectedAddress'>): string | null {
  return canonicalIpv4(h.overlayAddress) ?? canonicalIpv4(h.address) ?? canonicalIpv4(h.connectedAddress);
}
