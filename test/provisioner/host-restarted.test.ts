// The rules behind docs/pods.md, "A host that restarted", on their own (the real-host test is
// test/provisioner/restart-converge.test.ts): what observe()'s first line (`@@gpufleet-host <boot id>
// <SSH_CONNECTION>`) yields, and when a pod's ended container counts as ended with its host.
import { expect, test } from 'vitest';
import { hostRestarted } from '../../provisioner/pod-reconciler.ts';
import { splitHostLine } from '../../provisioner/host-docker.ts';

const BOOT_A = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const BOOT_B = '11111111-2222-3333-4444-555555555555';
const host = { id: 'h1' };
const seen = (hostBootId?: string) => ({ observed: { observedAt: '2026-11-26T20:00:00.000Z', ...(hostBootId ? { hostBootId } : {}) } }) as never;

test('a boot id that changed since the container was last seen running is a restart, with both in its reason', () => {
  const reason = hostRestarted(host, seen(BOOT_A), BOOT_B);
  expect(reason).toMatch(/^host h1 restarted \(its boot id changed since the pod's container was last seen running, at 2026-11-26T20:00:00\.000Z\)/);
});

test('the same boot id is no restart', () => {
  expect(hostRestarted(host, seen(BOOT_A), BOOT_A)).toBeNull();
});

test('a boot id that could not be read keeps the former behaviour (no restart)', () => {
  expect(hostRestarted(host, seen(BOOT_A), null)).toBeNull();
});

test('a pod never seen running has no boot id to compare: no restart', () => {
  expect(hostRestarted(host, seen(), BOOT_B)).toBeNull();
  expect(hostRestarted(host, { observed: undefined } as never, BOOT_B)).toBeNull();
});

test('the host line gives the boot id and the server address of SSH_CONNECTION, and the rest of stdout', () => {
  const r = splitHostLine(`@@gpufleet-host ${BOOT_A.toUpperCase()} 10.9.0.1 52344 10.9.0.7 22\n[{"Id":"x"}]\n`);
  expect(r).toEqual({ bootId: BOOT_A, connectedAddress: '10.9.0.7', rest: '[{"Id":"x"}]\n' });
});

test('no host line: nothing known, stdout untouched', () => {
  expect(splitHostLine('[]\n')).toEqual({ bootId: null, connectedAddress: null, rest: '[]\n' });
  expect(splitHostLine('@@gpufleet-hostx 1 2\n')).toEqual({ bootId: null, connectedAddress: null, rest: '@@gpufleet-hostx 1 2\n' });
});

test('a boot id the host could not read (`-`) or a malformed one is null; the rest is still split off', () => {
  expect(splitHostLine('@@gpufleet-host - 10.9.0.1 52344 10.9.0.7 22\nrest')).toEqual({ bootId: null, connectedAddress: '10.9.0.7', rest: 'rest' });
  expect(splitHostLine('@@gpufleet-host not-a-boot-id 10.9.0.1 1 10.9.0.7 22\n').bootId).toBeNull();
  expect(splitHostLine(`@@gpufleet-host ${BOOT_A}x 10.9.0.1 1 10.9.0.7 22\n`).bootId).toBeNull();
});

test('no SSH_CONNECTION (`-`), a line without a newline, or a truncated line: no address', () => {
  expect(splitHostLine(`@@gpufleet-host ${BOOT_A} -\n`)).toEqual({ bootId: BOOT_A, connectedAddress: null, rest: '' });
  expect(splitHostLine(`@@gpufleet-host ${BOOT_A} 10.9.0.1 52344`)).toEqual({ bootId: BOOT_A, connectedAddress: null, rest: '' });
});

test('a server address that is not a canonical IPv4 address is null, never stored', () => {
  for (const server of ['fe80::1', '::ffff:10.9.0.7', '999.1.1.1', '10.9.0.256', '010.0.0.1', '10.9.0', '10.9.0.7.1', '-o', 'host.example'])
    expect(splitHostLine(`@@gpufleet-host ${BOOT_A} 10.9.0.1 52344 ${server} 22\n`).connectedAddress, server).toBeNull();
});
