// The shell fragment that readies an account's network on a host before a container joins it
// (docs/security.md, "Networks"): the network on its gpufleet bridge, created when missing, then its
// isolation rules (tenant-firewall.ts). Pure; runs at the start of the pod's own round trip
// (host-docker.ts runPod), so a new container costs no extra round trip.
import { shellJoin } from '../fleet/index.ts';
import { GpufleetError } from '../model/index.ts';
import { END_OF_OPTIONS, type RunSpec } from './container-spec.ts';
import { isolationScript } from './tenant-firewall.ts';
import { TENANT_BRIDGE } from './tenant-network.ts';

/**
 * The script's exit status when the network or its rules could not be readied: a fault of the host,
 * not of the pod, which the reconciler tries again with backoff (retry-backoff.ts).
 */
export const NETWORK_SETUP_EXIT = 98;

/**
 * The account's network on its gpufleet bridge, then its isolation rules, before any container joins
 * (docs/security.md). Its bridge being there is enough (only that network has that bridge name: no
 * docker call) unless `askDocker`; when the bridge is missing docker is asked, and a network of an
 * earlier version (Docker's br-… bridge) is recreated when no container, running or stopped, is on
 * it, and kept otherwise (Docker's isolation only) until its last pod goes. `spare`: networks kept
 * for accounts with no pod on the host (tenant-network-gc.ts), removed to make room when the create
 * fails (the engine's address pools can run out). The rules are asserted either way. Every command
 * has stdin from /dev/null: the script's stdin carries the env for `docker run`.
 */
export function tenantNetworkScript(network: RunSpec['network'], opts: { askDocker: boolean; spare: readonly string[] }): string {
  const { bridge, name } = network;
  if (!TENANT_BRIDGE.test(bridge)) throw new GpufleetError('INTERNAL', `not a tenant bridge name: ${JSON.stringify(bridge)}`);
  const net = shellJoin([name]);
  const labels = Object.entries(network.labels).map(([k, v]) => `--label=${k}=${v}`);
  const create = `${shellJoin(['docker', 'network', 'create', '--driver=bridge', `--opt=com.docker.network.bridge.name=${bridge}`, ...labels, END_OF_OPTIONS, name])} >/dev/null </dev/null`;
  const spare = opts.spare.filter((n) => n !== name);
  const createOrMakeRoom = spare.length ? `{ ${create} || { ${shellJoin(['docker', 'network', 'rm', END_OF_OPTIONS, ...spare])} >/dev/null 2>&1 </dev/null; ${create}; }; }` : create;
  const ensure =
    `{ have=$(docker network inspect --format '{{index .Options "com.docker.network.bridge.name"}}' ${net} 2>/dev/null </dev/null) || have=-; ` +
    `if [ "$have" != - ] && [ "$have" != ${bridge} ] && [ -z "$(docker ps -aq --filter network=${net} </dev/null)" ]; then docker network rm ${net} >/dev/null </dev/null && have=-; fi; ` +
    `[ "$have" != - ] || ${createOrMakeRoom}; } ` +
    `|| { echo ${shellJoin([`could not create network ${name}`])} >&2; exit ${NETWORK_SETUP_EXIT}; }; `;
  return (
    (opts.askDocker ? ensure : `[ -e /sys/class/net/${bridge} ] || ${ensure}`) +
    `( ${isolationScript([bridge])}\n) </dev/null >/dev/null 2>&1 || { echo ${shellJoin([`could not set the isolation rules of network ${name} (iptables on the host)`])} >&2; exit ${NETWORK_SETUP_EXIT}; }; `
  );
}
