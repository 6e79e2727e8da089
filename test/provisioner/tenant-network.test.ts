import { expect, test } from 'vitest';
import { TENANT_BRIDGE, tenantBridgeName, tenantNetworkName } from '../../provisioner/tenant-network.ts';
import { forgetBridgesScript, isolationScript } from '../../provisioner/tenant-firewall.ts';
import { runSpec } from '../../provisioner/container-spec.ts';
import type { PodRecord } from '../../model/records/pod.ts';

// Docker's grammar for network (and container) names
const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

test('tenant network names hold the host and account ids and stay in docker name grammar', () => {
  expect(tenantNetworkName('host_0123456789ab', 'acct_0123456789abcdef0123')).toBe('gpufleet-host_0123456789ab-acct_0123456789abcdef0123');
  for (const [h, a] of [
    ['host-with-dash', 'acct_1'],
    ['h 1', 'a;rm -rf /'],
    ['hôst', '--network=host'],
    ['', ''],
  ] as const)
    expect(tenantNetworkName(h, a)).toMatch(DOCKER_NAME);
});

test('tenant network names never collide across hosts, accounts or sanitised ids', () => {
  const pairs: [string, string][] = [
    ['h1', 'a1'],
    ['h2', 'a1'],
    ['h1', 'a2'],
    ['h-1', 'a'],
    ['h', '1-a'],
    ['h_1', 'a'],
    ['h 1', 'a'],
    ['h.1', 'a'],
  ];
  const names = pairs.map(([h, a]) => tenantNetworkName(h, a));
  expect(new Set(names).size).toBe(pairs.length);
});

test('a pod joins its account network on its host in one --network= word, with the host alias', () => {
  const pod = {
    id: 'p1', accountId: 'acct_1', image: 'img:1', args: '', env: {}, ports: [], mounts: {}, gpuUuids: [], specGeneration: 1,
  } as unknown as PodRecord;
  const s = runSpec(pod, 'host_1');
  expect(s.argv).toContain('--network=gpufleet-host_1-acct_1');
  expect(s.argv).toContain('--add-host=host.docker.internal:host-gateway');
  expect(s.argv.indexOf('--network=gpufleet-host_1-acct_1')).toBeLessThan(s.argv.indexOf('img:1'));
  expect(s.network).toEqual({ name: 'gpufleet-host_1-acct_1', bridge: tenantBridgeName('host_1', 'acct_1'), labels: { 'gpufleet.host': 'host_1', 'gpufleet.account': 'acct_1' } });
});

test('tenant bridges are gf + 13 hex digits (15 characters, the most Linux allows), one per host and account', () => {
  const pairs: [string, string][] = [['h1', 'a1'], ['h2', 'a1'], ['h1', 'a2'], ['h 1', 'a;rm -rf /'], ['', ''], ['hôst', '--network=host']];
  const names = pairs.map(([h, a]) => tenantBridgeName(h, a));
  for (const n of names) {
    expect(n).toMatch(TENANT_BRIDGE);
    expect(n.length).toBe(15);
  }
  expect(new Set(names).size).toBe(pairs.length);
  expect(tenantBridgeName('h1', 'a1')).toBe(tenantBridgeName('h1', 'a1'));
});

test('the isolation script names only validated bridges; RETURNs inserted first in our chain, the DROP appended, our jump first in DOCKER-USER', () => {
  const b = tenantBridgeName('h1', 'a1');
  const script = isolationScript([b, b]);
  const lines = script.split('\n');
  expect(lines.filter((l) => l.startsWith('ipt ') && l.includes(`-i ${b} -o ${b} -j RETURN`))).toEqual([
    `ipt -C GPUFLEET-ISOLATION -i ${b} -o ${b} -j RETURN 2>/dev/null || ipt -I GPUFLEET-ISOLATION 1 -i ${b} -o ${b} -j RETURN || exit 1`,
  ]);
  expect(script).toContain('ipt -C GPUFLEET-ISOLATION -j DROP 2>/dev/null || ipt -A GPUFLEET-ISOLATION -j DROP || exit 1');
  expect(script).toContain('ipt -C DOCKER-USER -i gf+ -o gf+ -j GPUFLEET-ISOLATION 2>/dev/null || ipt -I DOCKER-USER 1 -i gf+ -o gf+ -j GPUFLEET-ISOLATION || exit 1');
  // RETURNs come before the DROP is (re)appended, so a flushed chain gets them back in order
  const ipt = lines.filter((l) => l.startsWith('ipt '));
  expect(ipt.findIndex((l) => l.includes('-j RETURN'))).toBeLessThan(ipt.findIndex((l) => l.includes('-j DROP')));
  for (const bad of ['br-0123456789', 'gf0123456789abc; reboot', '--flush', 'gf+', 'GF0123456789abc', 'gf0123456789ab'])
    for (const f of [isolationScript, forgetBridgesScript]) expect(() => f([bad]), bad).toThrow(/not a tenant bridge/);
});
