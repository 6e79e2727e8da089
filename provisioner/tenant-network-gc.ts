// Garbage collection of per-account networks (tenant-network.ts): a host's network for an account
// goes once no pod of that account on the host needs it (terminated, moved, or never there).
import type { PodRecord } from '../model/index.ts';
import type { HostDocker } from './host-docker.ts';
import { tenantBridgeName, tenantNetworkName } from './tenant-network.ts';

/**
 * Which accounts may still have a network is remembered per host, so a pass with nothing to remove
 * costs no round trip; the first pass for a host (a restarted control plane) asks the host.
 */
export class TenantNetworkCollector {
  private readonly known = new Map<string, Set<string>>();

  /** `pods`: the pods the store places on the host, as the pass that just ran saw them. */
  async collect(hostId: string, docker: HostDocker, pods: readonly PodRecord[]): Promise<void> {
    const inUse = new Set(pods.filter((p) => p.desiredStatus !== 'TERMINATED').map((p) => p.accountId));
    const known = this.known.get(hostId) ?? new Set(await docker.tenantNetworkAccounts(hostId));
    const names = new Map([...known].filter((a) => !inUse.has(a)).map((a) => [tenantNetworkName(hostId, a), a]));
    // a network a container still holds (its removal failed) stays, and is tried again next pass
    const bridges = [...names.values()].map((a) => tenantBridgeName(hostId, a));
    const left = names.size ? await docker.removeNetworks([...names.keys()], bridges) : [];
    this.known.set(hostId, new Set([...inUse, ...left.flatMap((n) => names.get(n) ?? [])]));
  }
}
