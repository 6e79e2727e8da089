// The operator's address of a host for the overlay (docs/networking.md, "A host's overlay address"):
// named at enrolment (`overlayAddress`) or later (PATCH /v2/hosts/{id}). It must be an IPv4 address
// the host has now (its `ip -4 addr`, read over its SSH connection at that moment), outside the overlay
// range; anything else is 422 VALIDATION_FAILED naming `$.overlayAddress`, and nothing changes.
import { GpufleetError, ipv4ToNumber, numberToIpv4, type Ipv4Range } from '../../model/index.ts';

const refuse = (detail: string, fields: Record<string, unknown> = {}) =>
  new GpufleetError('VALIDATION_FAILED', detail, { errors: [`$.overlayAddress: ${detail}`], fields: { field: '$.overlayAddress', ...fields } });

/**
 * `addr` written canonically when the host has it (`addresses`: its `ip -o -4 addr` as `a.b.c.d/nn`);
 * throws otherwise
 */
export function checkOverlayAddress(addr: string, addresses: readonly string[], range: Ipv4Range | null): string {
  const n = ipv4ToNumber(addr);
  if (n === null) throw refuse(`${JSON.stringify(addr.slice(0, 64))} is not an IPv4 address`);
  const canonical = numberToIpv4(n);
  if (range && n >= range.base && n < range.base + range.size)
    throw refuse(`${canonical} is inside the overlay range ${range.cidr}`, { overlayCidr: range.cidr });
  if (canonical.startsWith('127.')) throw refuse(`${canonical} is a loopback address: other hosts cannot reach it`);
  const has = addresses.map((a) => a.split('/')[0]!);
  if (!has.includes(canonical))
    throw refuse(`the host has no address ${canonical} (its IPv4 addresses: ${has.join(', ') || 'none'})`, { addresses: has });
  return canonical;
}
