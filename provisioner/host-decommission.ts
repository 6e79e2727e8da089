// What a removed host keeps of gpufleet goes with it (docs/fleet.md "Removing a host"): every
// container labelled for it (a forced removal's pods, orphans) and every account network the
// provisioner made there, with its isolation rules. The reconciler no longer visits a removed host, so
// this is done once, at removal, over the connection the host still has.
import type { HostRecord } from '../model/index.ts';
import type { SshPool, SshTarget } from '../fleet/index.ts';
import { HostDocker } from './host-docker.ts';
import { tenantBridgeName, tenantNetworkName } from './tenant-network.ts';

export async function decommissionHost(pool: SshPool, host: HostRecord, target: SshTarget): Promise<void> {
  const docker = new HostDocker(pool, target);
  for (const c of await docker.observe()) await docker.remove(c.id);
  const accounts = await docker.tenantNetworkAccounts(host.id);
  if (!accounts.length) return;
  const left = await docker.removeNetworks(
    accounts.map((a) => tenantNetworkName(host.id, a)),
    accounts.map((a) => tenantBridgeName(host.id, a)),
  );
  if (left.length) throw new Error(`networks still in use on the host: ${left.join(', ')}`);
}
