// gpufleet's own isolation between accounts' networks on a host (docs/security.md, "Networks"), so
// it does not rest on Docker's DOCKER-ISOLATION-STAGE-1/2 chains alone, which dockerd rewrites when
// it starts and which anything else touching iptables on the host can flush or reorder. Every
// tenant bridge is named `gf<13 hex>` (tenant-network.ts), and in the filter table:
//
//   FORWARD      -j DOCKER-USER                                 (Docker's own; kept if lost)
//   DOCKER-USER  -i gf+ -o gf+ -j GPUFLEET-ISOLATION            (first)
//   GPUFLEET-ISOLATION  -i gfA -o gfA -j RETURN                 (one per tenant bridge: within a network)
//                       …
//                       -j DROP                                (last: between two tenant bridges)
//
// Docker never flushes DOCKER-USER or a chain of ours. FORWARD only: the host's own traffic to
// containers (OUTPUT, the gateway's channels) and a pod's traffic to anything that is not another
// tenant bridge are untouched. Asserting them reads the filter table once (`iptables-save`) and is
// done when every rule is there (the usual case, one command whatever the number of bridges); else
// each rule is checked (`-C`) before it is added. Only validated bridge names reach the script.
import { GpufleetError } from '../model/index.ts';
import { TENANT_BRIDGE } from './tenant-network.ts';

export const ISOLATION_CHAIN = 'GPUFLEET-ISOLATION';
/** printed on stderr when asserting the rules failed */
export const FIREWALL_FAILED = 'gpufleet-firewall-failed';

function checked(bridges: readonly string[]): string[] {
  for (const b of bridges) if (!TENANT_BRIDGE.test(b)) throw new GpufleetError('INTERNAL', `not a tenant bridge name: ${JSON.stringify(b)}`);
  return [...new Set(bridges)];
}

/**
 * A shell script that makes sure the rules above hold for `bridges` (and for whatever other tenant
 * bridges have their RETURN already); exits non-zero when iptables fails, having said why on stderr.
 * Order within our chain is by construction: RETURNs are inserted first in it, the DROP appended.
 * Run it in a subshell: it ends with `exit`.
 */
export function isolationScript(bridges: readonly string[]): string {
  const c = ISOLATION_CHAIN;
  const valid = checked(bridges);
  // the rules as `iptables-save` prints them: all there (whole lines) → nothing to change
  const wanted = [
    ...valid.map((b) => `-A ${c} -i ${b} -o ${b} -j RETURN`),
    `-A ${c} -j DROP`,
    `-A DOCKER-USER -i gf+ -o gf+ -j ${c}`,
    '-A FORWARD -j DOCKER-USER',
  ];
  const lines = [
    `nl='\n'`,
    `saved="$nl$(iptables-save -t filter 2>/dev/null)$nl"`,
    `for r in ${wanted.map((w) => `'${w}'`).join(' ')}; do case "$saved" in *"$nl$r$nl"*) ;; *) saved=; break;; esac; done`,
    `[ -z "$saved" ] || exit 0`,
    `ipt() { iptables -w 5 "$@"; }`,
    `ipt -n -L ${c} >/dev/null 2>&1 || ipt -N ${c} 2>/dev/null || ipt -n -L ${c} >/dev/null || exit 1`,
    ...valid.map((b) => `ipt -C ${c} -i ${b} -o ${b} -j RETURN 2>/dev/null || ipt -I ${c} 1 -i ${b} -o ${b} -j RETURN || exit 1`),
    `ipt -C ${c} -j DROP 2>/dev/null || ipt -A ${c} -j DROP || exit 1`,
    `ipt -C DOCKER-USER -i gf+ -o gf+ -j ${c} 2>/dev/null || ipt -I DOCKER-USER 1 -i gf+ -o gf+ -j ${c} || exit 1`,
    `ipt -C FORWARD -j DOCKER-USER 2>/dev/null || ipt -I FORWARD 1 -j DOCKER-USER || exit 1`,
  ];
  return lines.join('\n');
}

/** The same, as a prelude of another script: never fails it, reports FIREWALL_FAILED on stderr. */
export function isolationPrelude(bridges: readonly string[]): string {
  return `( ${isolationScript(bridges)}\n) </dev/null >/dev/null 2>&1 || echo ${FIREWALL_FAILED} >&2; `;
}

/** Drops the RETURN rules of bridges whose networks are gone (every copy; none is fine). */
export function forgetBridgesScript(bridges: readonly string[]): string {
  return checked(bridges)
    .map((b) => `while iptables -w 5 -D ${ISOLATION_CHAIN} -i ${b} -o ${b} -j RETURN 2>/dev/null; do :; done`)
    .join('; ');
}
