// One Docker network per account on each host (docs/security.md): an account's pods reach each
// other; gpufleet's own iptables rules (tenant-firewall.ts), besides Docker's, keep other accounts'
// pods out. Named here, pure; created with the account's first container on the host
// (host-docker.ts), removed by tenant-network-gc.ts.

import { createHash } from 'node:crypto';

/** What each pod's /etc/hosts maps to its host (Docker's `host-gateway`), for services on the host. */
export const HOST_ALIAS = 'host.docker.internal';

const PLAIN = /^[A-Za-z0-9_.]+$/;

/**
 * `gpufleet-<host id>-<account id>`. Test hosts share one engine, so the host id is part of the name.
 * Ids outside Docker's name grammar (or holding the `-` separator) are sanitised and a hash of the
 * exact ids is appended, so two pairs never share a name.
 */
export function tenantNetworkName(hostId: string, accountId: string): string {
  if (PLAIN.test(hostId) && PLAIN.test(accountId)) return `gpufleet-${hostId}-${accountId}`;
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_.]/g, '_').slice(0, 40);
  const hash = createHash('sha256').update(`${hostId}\0${accountId}`).digest('hex').slice(0, 12);
  return `gpufleet-${clean(hostId)}-${clean(accountId)}-${hash}`;
}

/** the bridge interfaces of tenant networks: `gf` + 13 hex digits, 15 characters (Linux's IFNAMSIZ - 1) */
export const TENANT_BRIDGE = /^gf[0-9a-f]{13}$/;

/**
 * The Linux bridge of the account's network on the host (`com.docker.network.bridge.name`): `gf` and
 * a hash of the exact ids, so gpufleet's firewall rules can name every tenant bridge as `gf+`.
 */
export function tenantBridgeName(hostId: string, accountId: string): string {
  return `gf${createHash('sha256').update(`bridge\0${hostId}\0${accountId}`).digest('hex').slice(0, 13)}`;
}
