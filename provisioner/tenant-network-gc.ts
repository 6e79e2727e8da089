// Garbage collection of per-account networks (tenant-network.ts): a host's network for an account
// goes once no pod of that account has been on the host for NETWORK_LINGER_MS (terminated, moved, or
// never there). Until then it stays, with its isolation rules, so the account's next pod there (a
// serverless endpoint scaling up from zero again) waits neither for it to be created (about 0.1 s)
// nor for the removal of the one before (about 0.2 s, in the pass ahead of it). A network kept so is
// spare: a network create that fails (the engine's address pools run out) removes the spare ones and
// tries again (tenant-network-setup.ts), so keeping them never costs an account its network.
import type { PodRecord } from '../model/index.ts';
import type { HostDocker } from './host-docker.ts';
import { tenantBridgeName, tenantNetworkName } from './tenant-network.ts';

/** how long an account's network stays on a host after its last pod there went */
export const NETWORK_LINGER_MS = 10 * 60_000;

/**
 * Which accounts may still have a network is remembered per host, so a pass with nothing to remove
 * costs no round trip; the first pass for a host (a restarted control plane) asks the host, and
 * counts the networks it finds without a pod as unused from then.
 */
export class TenantNetworkCollector {
  /** host id → account id → since when (ms) no pod of the account is on the host; null while one is */
  private readonly known = new Map<string, Map<string, number | null>>();

  constructor(
    private readonly lingerMs = NETWORK_LINGER_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** `pods`: the pods the store places on the host, as the pass that just ran saw them. */
  async collect(hostId: string, docker: HostDocker, pods: readonly PodRecord[]): Promise<void> {
    const now = this.clock();
    const inUse = new Set(pods.filter((p) => p.desiredStatus !== 'TERMINATED').map((p) => p.accountId));
    const known = this.known.get(hostId) ?? new Map((await docker.tenantNetworkAccounts(hostId)).map((a) => [a, now]));
    for (const a of inUse) known.set(a, null);
    for (const [a, since] of known) if (since === null && !inUse.has(a)) known.set(a, now);
    const due = [...known].filter(([, since]) => since !== null && now - since >= this.lingerMs).map(([a]) => a);
    const names = new Map(due.map((a) => [tenantNetworkName(hostId, a), a]));
    // a network a container still holds (its removal failed) stays, and is tried again next pass
    const left = names.size ? await docker.removeNetworks([...names.keys()], due.map((a) => tenantBridgeName(hostId, a))) : [];
    const kept = new Set(left.flatMap((n) => names.get(n) ?? []));
    for (const a of due) if (!kept.has(a)) known.delete(a);
    this.known.set(hostId, known);
  }

  /** The host's networks kept for accounts not in `inUse` (none known before the host's first pass). */
  spare(hostId: string, inUse: ReadonlySet<string>): string[] {
    const known = this.known.get(hostId);
    return known ? [...known].filter(([a, since]) => since !== null && !inUse.has(a)).map(([a]) => tenantNetworkName(hostId, a)) : [];
  }
}
