// The grammar every word of the overlay's shell scripts is checked against before it is written
// (overlay-script.ts, overlay-dns.ts): nothing a user wrote reaches a host, and a word that is not what
// the plan promises (a pod id, an address, a device name) is an internal error, never a script.
import { GpufleetError } from '../../model/index.ts';
import { ipv4ToNumber } from '../../model/index.ts';

/** pod ids as the store makes them (file names and hosts-file names are built from them) */
export const POD_ID = /^[a-z0-9_-]{1,64}$/;

/** throws INTERNAL naming `what` and the value unless `ok`; `where` says which script's plan */
export function check(ok: boolean, what: string, value: unknown, where = 'overlay plan'): void {
  if (!ok) throw new GpufleetError('INTERNAL', `${where}: not a valid ${what}: ${JSON.stringify(value)}`);
}

/** a pod id, checked */
export const podIdWord = (v: string, where?: string): string => (check(POD_ID.test(v), 'pod id', v, where), v);
/** an IPv4 address, checked */
export const ipWord = (v: string, where?: string): string => (check(ipv4ToNumber(v) !== null, 'IPv4 address', v, where), v);
/** an integer in [min, max], checked, as its decimal word */
export const intWord = (min: number, max: number, what: string, v: number, where?: string): string =>
  (check(Number.isInteger(v) && v >= min && v <= max, what, v, where), String(v));
