// When per-account networks go (tenant-network-gc.ts), against a host that records what it is asked.
import { expect, test } from 'vitest';
import type { PodRecord } from '../../model/records/pod.ts';
import type { HostDocker } from '../../provisioner/host-docker.ts';
import { TenantNetworkCollector } from '../../provisioner/tenant-network-gc.ts';
import { tenantBridgeName, tenantNetworkName } from '../../provisioner/tenant-network.ts';

const H = 'h1';
const pod = (accountId: string, desiredStatus: PodRecord['desiredStatus'] = 'RUNNING') => ({ accountId, desiredStatus }) as PodRecord;

/** networks on the host by account; `held`: accounts whose network a container still holds */
function fakeHost(accounts: string[], held = new Set<string>()) {
  const nets = new Set(accounts);
  const asked = { ls: 0, removed: [] as string[], bridges: [] as string[] };
  const docker = {
    tenantNetworkAccounts: async () => (asked.ls++, [...nets]),
    removeNetworks: async (names: readonly string[], bridges: readonly string[] = []) => {
      asked.removed.push(...names);
      asked.bridges.push(...bridges);
      const left = names.filter((n) => [...held].some((a) => tenantNetworkName(H, a) === n));
      for (const a of [...nets]) if (names.includes(tenantNetworkName(H, a)) && !held.has(a)) nets.delete(a);
      return left;
    },
  } as unknown as HostDocker;
  return { docker, nets, asked };
}

test("an account's network stays for the linger after its last pod on the host went, as a spare, then goes with its rules", async () => {
  let now = 1_000_000;
  const gc = new TenantNetworkCollector(60_000, () => now);
  const { docker, nets, asked } = fakeHost(['alice', 'bob']);
  await gc.collect(H, docker, [pod('alice'), pod('bob')]);
  expect(asked.ls).toBe(1);
  expect(gc.spare(H, new Set())).toEqual([]);

  now += 5_000;
  await gc.collect(H, docker, [pod('alice'), pod('bob', 'TERMINATED')]);
  expect(asked.removed).toEqual([]);
  // bob's network is spare, unless bob has a pod in the pass that asks
  expect(gc.spare(H, new Set(['alice']))).toEqual([tenantNetworkName(H, 'bob')]);
  expect(gc.spare(H, new Set(['alice', 'bob']))).toEqual([]);

  now += 59_999;
  await gc.collect(H, docker, [pod('alice')]);
  expect(asked.removed).toEqual([]);
  now += 1;
  await gc.collect(H, docker, [pod('alice')]);
  expect(asked.removed).toEqual([tenantNetworkName(H, 'bob')]);
  expect(asked.bridges).toEqual([tenantBridgeName(H, 'bob')]);
  expect([...nets]).toEqual(['alice']);
  expect(gc.spare(H, new Set())).toEqual([]);
  // the host was asked only on the first pass
  expect(asked.ls).toBe(1);
});

test('an account back within the linger keeps its network and starts a new linger when it leaves again', async () => {
  let now = 0;
  const gc = new TenantNetworkCollector(60_000, () => now);
  const { docker, asked } = fakeHost(['bob']);
  await gc.collect(H, docker, [pod('bob')]);
  now = 1_000;
  await gc.collect(H, docker, []);
  now = 50_000;
  await gc.collect(H, docker, [pod('bob')]);
  now = 100_000;
  await gc.collect(H, docker, []);
  now = 159_999;
  await gc.collect(H, docker, []);
  expect(asked.removed).toEqual([]);
  now = 160_000;
  await gc.collect(H, docker, []);
  expect(asked.removed).toEqual([tenantNetworkName(H, 'bob')]);
});

test('networks a restarted control plane finds without a pod go after the linger; one a container still holds is tried again each pass', async () => {
  let now = 0;
  const gc = new TenantNetworkCollector(10_000, () => now);
  const { docker, asked } = fakeHost(['ghost', 'stuck'], new Set(['stuck']));
  await gc.collect(H, docker, []);
  expect(asked.removed).toEqual([]);
  expect(gc.spare(H, new Set()).sort()).toEqual([tenantNetworkName(H, 'ghost'), tenantNetworkName(H, 'stuck')].sort());
  now = 10_000;
  await gc.collect(H, docker, []);
  expect(asked.removed.sort()).toEqual([tenantNetworkName(H, 'ghost'), tenantNetworkName(H, 'stuck')].sort());
  asked.removed.length = 0;
  now = 10_500;
  await gc.collect(H, docker, []);
  expect(asked.removed).toEqual([tenantNetworkName(H, 'stuck')]);
});

test('with no linger a network goes in the pass after its last pod', async () => {
  const gc = new TenantNetworkCollector(0);
  const { docker, asked } = fakeHost([]);
  await gc.collect(H, docker, [pod('carol')]);
  await gc.collect(H, docker, [pod('carol', 'TERMINATED')]);
  expect(asked.removed).toEqual([tenantNetworkName(H, 'carol')]);
});
