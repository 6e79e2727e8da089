// The namespace test fleet (netns-fleet.ts) is what the networking tests stand on: each host its own
// namespace, engine and sshd; two LANs behind a router; the FORWARD policy asked; nothing left behind.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { provisioner } from '../../provisioner/index.ts';
import { startTestControlPlane } from './control-plane.ts';
import { enrolTestHost, FIXTURE_GPUS, TEST_IMAGE } from '../../testing/index.ts';
import { startNetnsFleet, type FleetHost, type NetnsFleet } from './netns-fleet.ts';
import { waitFor } from './wait-for.ts';

const execFileP = promisify(execFile);
let fleet: NetnsFleet;

/** runs `command` on the host over its own sshd, as the provisioner does */
function sshRun(h: FleetHost, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = new Client();
    c.on('ready', () => {
      c.exec(command, (err, stream) => {
        if (err) return reject(err);
        let out = '';
        let errOut = '';
        stream.on('data', (d: Buffer) => (out += d.toString()));
        stream.stderr.on('data', (d: Buffer) => (errOut += d.toString()));
        stream.on('close', (code: number) => {
          c.end();
          if (code === 0) resolve(out);
          else reject(new Error(`${command}: exit ${code}: ${errOut}`));
        });
      });
    });
    c.on('error', reject);
    c.connect({ host: h.address, port: 22, username: 'root', privateKey: h.ssh.privateKey, readyTimeout: 20_000 });
  });
}

beforeAll(async () => {
  fleet = await startNetnsFleet({
    hosts: [
      { name: 'a1', dataCenterId: 'DC-A', forward: 'DROP' },
      { name: 'a2', dataCenterId: 'DC-A', forward: 'ACCEPT' },
      { name: 'b1', dataCenterId: 'DC-B', forward: 'DROP', gpus: [FIXTURE_GPUS.H100_80GB_HBM3] },
    ],
  });
}, 240_000);

afterAll(async () => {
  await fleet?.dispose();
}, 120_000);

describe('namespace test fleet', () => {
  test('each host answers SSH on its LAN address and its sessions drive its own engine', async () => {
    const roots = await Promise.all(fleet.hosts.map((h) => sshRun(h, 'docker info --format "{{.DockerRootDir}}"')));
    fleet.hosts.forEach((h, i) => expect(roots[i]!.trim()).toBe(`${h.engine.dir}/data`));
    // the test image is in every engine
    for (const h of fleet.hosts) expect((await sshRun(h, `docker image inspect --format ok ${TEST_IMAGE}`)).trim()).toBe('ok');
  });

  test('the FORWARD policy of each host is the one asked', async () => {
    for (const h of fleet.hosts) {
      const rules = await h.inNetns(['iptables', '-w', '5', '-S', 'FORWARD']);
      expect(rules.split('\n')[0]).toBe(`-P FORWARD ${h.spec.forward}`);
    }
  });

  test('hosts of one data center share a LAN; the other data center is one router away; containers reach the LAN', async () => {
    const [a1, a2, b1] = fleet.hosts as [FleetHost, FleetHost, FleetHost];
    // same LAN: a1 sees a2's MAC directly (neighbour), and b1 through the router
    await a1.inNetns(['busybox', 'ping', '-c', '1', '-W', '2', a2.address]);
    await a1.inNetns(['busybox', 'ping', '-c', '1', '-W', '2', b1.address]);
    const route = await a1.inNetns(['ip', 'route', 'get', b1.address]);
    expect(route).toContain(`via ${fleet.lanOf('DC-A').replace(/0\/24$/, '1')}`);
    expect(await a1.inNetns(['ip', 'route', 'get', a2.address])).not.toContain('via');
    // a container on a2 (its engine's own bridge) reaches b1 across the router
    const out = await a2.docker(['run', '--rm', TEST_IMAGE, 'ping', '-c', '1', '-W', '3', b1.address], { timeoutMs: 60_000 });
    expect(out.stdout).toContain('1 packets received');
    // each engine's default bridge is its own range
    const bridges = await Promise.all(fleet.hosts.map((h) => h.inNetns(['ip', '-4', '-o', 'addr', 'show', 'docker0'])));
    expect(new Set(bridges.map((b) => b.split(/\s+/)[3])).size).toBe(3);
    // this machine reaches every host (the control plane enrols them by these addresses)
    for (const h of fleet.hosts) await execFileP('busybox', ['ping', '-c', '1', '-W', '2', h.address]);
  }, 90_000);

  test('a control plane enrols the hosts by their LAN addresses and runs a pod in the engine of the host it placed it on', async () => {
    const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
    try {
      for (const h of fleet.hosts) await enrolTestHost(cp, h.ssh, { dataCenterId: h.dataCenterId });
      const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'p', image: TEST_IMAGE, args: 'sleep 3600', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' }, dataCenterIds: ['DC-B'] } });
      const pod = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(pod)).toBe(201);
      await waitFor('the pod RUNNING', async () => ((await (await cp.api(`/v2/pods/${pod.id}`)).json()) as { status: string }).status === 'RUNNING', 60_000);
      const b1 = fleet.host('b1');
      expect((await b1.docker(['ps', '--format', '{{.Names}}'])).stdout).toContain(`gpufleet-${pod.id}`);
      for (const h of fleet.hosts.filter((x) => x !== b1)) expect((await h.docker(['ps', '-a', '--format', '{{.Names}}'])).stdout).not.toContain(pod.id);
    } finally {
      await cp.close();
    }
  }, 120_000);

  test('dispose removes the namespaces, engines and sshds it made', async () => {
    const other = await startNetnsFleet({ hosts: [{ name: 'x', dataCenterId: 'DC-X' }] });
    const h = other.hosts[0]!;
    const pid = h.engine.pid;
    await other.dispose();
    expect(existsSync(`/var/run/netns/${h.netns}`)).toBe(false);
    expect(existsSync(`/var/run/netns/${other.router}`)).toBe(false);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(existsSync(h.engine.dir)).toBe(false);
    expect(h.ssh.running).toBe(false);
    expect((await execFileP('ip', ['-4', 'route'])).stdout).not.toContain(other.cidr);
  }, 180_000);
});
