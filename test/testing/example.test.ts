// examples/test-fleet.ts run as its comment says (`node --import tsx`): it starts a fleet of two test
// hosts with gpufleet/testing, runs a two-GPU pod on one of them, reads the pod's GPUs from inside
// its container, stops it and closes the fleet. Checked here: what it printed (the GPUs are the
// fixture GPUs of the host the pod ran on), its exit code, and that nothing of it is left.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { fixtureGpuUuid, listContainers } from '../../testing/index.ts';
import { REPO_ROOT } from '../harness/control-plane.ts';

const refused = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const sock = connect({ host, port }, () => (sock.destroy(), resolve(false)));
    sock.on('error', () => resolve(true));
  });

test('examples/test-fleet.ts runs a GPU pod on a fleet of test hosts and leaves nothing behind', { timeout: 240_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'examples/test-fleet.ts')], { cwd: REPO_ROOT, timeout: 200_000 });
  const lines = stdout.trim().split('\n');
  const hosts = [...lines[0]!.matchAll(/(host_\w+) (\S+) \(([\d.]+):(\d+)\)/g)].map((m) => ({ id: m[1]!, name: m[2]!, address: m[3]!, port: Number(m[4]) }));
  expect(hosts, lines[0]).toHaveLength(2);
  const running = /^pod (\w+) RUNNING on host (host_\w+)$/.exec(lines[1]!);
  expect(running, lines[1]).not.toBeNull();
  const on = hosts.find((h) => h.id === running![2])!;
  expect(on).toBeDefined();
  expect(lines[2]).toBe(`its GPUs: ${fixtureGpuUuid(on.name, 0)},${fixtureGpuUuid(on.name, 1)}`);
  expect(lines[3]).toBe(`pod ${running![1]} EXITED`);
  expect(lines[4]).toBe('fleet closed');
  for (const h of hosts) {
    expect(await listContainers(`gpufleet.host=${h.id}`)).toEqual([]);
    expect(await refused(h.address, h.port), `${h.address}:${h.port} still listens`).toBe(true);
  }
});
