import { expect, test } from 'vitest';
import { tenantNetworkName } from './tenant-network.ts';
import { runSpec } from './container-spec.ts';
import type { PodRecord } from '../model/pod.ts';

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
  expect(s.network).toEqual({ name: 'gpufleet-host_1-acct_1', labels: { 'gpufleet.host': 'host_1', 'gpufleet.account': 'acct_1' } });
});
