// The guard every enrolled host carries, whether or not it has overlay pods (docs/networking.md,
// "The VXLAN guard"): pods (on Docker's bridges, docker0 and gpufleet's own `gf…` bridges) never send
// UDP to the overlay's port, here or on another host. Such a packet leaves the host masqueraded to the
// host's fleet address, so the receiving host cannot tell it from the overlay's own; it is stopped
// where it enters the host. Forwarded traffic is stopped in DOCKER-USER, which Docker keeps first in
// FORWARD (it inserts its own rules above ours in FORWARD itself whenever it makes a network); traffic
// to this host in INPUT. Check-then-add: running it again changes nothing that is in place.
import { GpufleetError } from '../../model/index.ts';

/** printed (on stdout) for each rule the guard had to add: tests and logs read them */
export const GUARD_MADE = 'gpufleet-guard-made';
/** printed on stderr for a rule that could not be added; the script exits 1 */
export const GUARD_FAILED = 'gpufleet-guard-failed';
/** the bridges pods sit on (iptables interface patterns) */
export const GUARDED_BRIDGES = ['docker0', 'gf+'] as const;

/** the guard's shell lines (for `sh -s`); `port` is the overlay's UDP port, checked here */
export function guardScript(port: number): string {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new GpufleetError('INTERNAL', `overlay guard: not a valid port: ${JSON.stringify(port)}`);
  return [
    'export LC_ALL=C',
    'rc=0',
    'ipt() { iptables -w 5 "$@"; }',
    'ipt -n -L DOCKER-USER >/dev/null 2>&1 && fwd=DOCKER-USER || fwd=FORWARD',
    `for c in INPUT $fwd; do for i in ${GUARDED_BRIDGES.join(' ')}; do ` +
      `ipt -C $c -i $i -p udp --dport ${port} -j DROP 2>/dev/null || ` +
      `{ ipt -I $c 1 -i $i -p udp --dport ${port} -j DROP && echo "${GUARD_MADE} $c $i"; } || { echo "${GUARD_FAILED} $c $i" >&2; rc=1; }; done; done`,
    'exit $rc',
    '',
  ].join('\n');
}
