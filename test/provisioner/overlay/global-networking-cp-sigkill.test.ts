// The control plane killed with SIGKILL while two pods of one account talk over the overlay (issue 21,
// docs/networking.md "Convergence"): the traffic keeps flowing while it is down (static entries), and
// after it starts again on the same data directory its pass puts back a route removed meanwhile while
// nothing that exists is made again (the same podnet1 and VXLAN devices, by interface index, and the
// same address).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort, spawnControlPlane, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { enrolTestHost, FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import { startNetnsFleet, type FleetHost, type NetnsFleet } from '../../harness/netns-fleet.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { OverlayWorld, removeAccountNamespaces, type WorldPod } from '../../harness/overlay-world.ts';
import { namespacePrefix } from '../../../provisioner/overlay/overlay-plan.ts';

const execFileP = promisify(execFile);
const H = FIXTURE_GPUS.H100_80GB_HBM3;
let fleet: NetnsFleet;
let cp: SpawnedControlPlane | null = null;
let dataDir: string;
let port: number;
let w: OverlayWorld;
const pods: WorldPod[] = [];
let prefixes: string[] = [];

const start = async () =>
  (cp = await spawnControlPlane({ dataDir, port, startTimeoutMs: 120_000, env: { GPUFLEET_RECONCILE_INTERVAL_MS: '300', GPUFLEET_LOG_LEVEL: 'warn' } }));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-overlay-kill-'));
  port = await freePort();
  fleet = await startNetnsFleet({ hosts: [{ name: 'k1', dataCenterId: 'DC-K', gpus: [H] }, { name: 'k2', dataCenterId: 'DC-K', gpus: [H] }] });
  await start();
  const api = (p: string, init: { method?: string; json?: unknown; key?: string } = {}) =>
    fetch(cp!.url + p, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.key ?? cp!.adminKey}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
  const hostsById = new Map<string, FleetHost>();
  for (const h of fleet.hosts) hostsById.set(await enrolTestHost(cp!, h.ssh, { dataCenterId: 'DC-K' }), h);
  prefixes = [...hostsById.keys()].map(namespacePrefix);
  w = new OverlayWorld(fleet, api, hostsById);
  // one GPU per host: the two pods land on the two hosts
  for (const name of ['k-a', 'k-b']) pods.push(await w.create(cp!.adminKey, 'admin', name, { image: TEST_IMAGE, globalNetworking: true }));
  for (const p of pods) await waitFor(`podnet1 in ${p.name}`, async () => (await w.podnet1(p)) !== null, 20_000);
}, 300_000);

afterAll(async () => {
  await cp?.kill('SIGKILL');
  await fleet?.dispose();
  await removeAccountNamespaces([...(w?.hostsById.keys() ?? [])]);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 120_000);

/** interface indexes: podnet1 in each pod, and the VXLAN device in each host's account namespace */
async function indexes(): Promise<string[]> {
  const out: string[] = [];
  for (const p of pods) out.push((await w.inPod(p, ['ip', '-o', 'link', 'show', 'podnet1'])).split(':')[0]!);
  // this fleet's account namespaces: the two hosts' (other tests' have other host prefixes)
  const ns = (await execFileP('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]!).filter((n) => prefixes.some((p) => n.startsWith(p)));
  for (const n of ns) {
    const links = (await execFileP('nsenter', [`--net=/var/run/netns/${n}`, 'ip', '-o', 'link', 'show'])).stdout;
    for (const l of links.split('\n').filter((x) => /: gfx/.test(x))) out.push(`${n}:${l.split(':')[0]}`);
  }
  return out.sort();
}

describe('control plane SIGKILL with overlay traffic flowing', () => {
  test('pings keep answering while it is down; after its restart a route removed meanwhile is put back and nothing else is made again', async () => {
    const [a, b] = pods as [WorldPod, WorldPod];
    expect((await w.hostOf(a)).spec.name).not.toBe((await w.hostOf(b)).spec.name);
    const before = await indexes();
    expect(before.length).toBeGreaterThanOrEqual(4);
    await cp!.kill('SIGKILL');
    cp = null;
    // down: 10 pings, 0.2 s apart, all answered
    const out = await w.exec(a, ['ping', '-c', '10', '-i', '0.2', '-W', '2', b.ip!], 30_000);
    expect(out).toContain('10 packets received');
    // while it is down, one entry goes missing on a's host: the restarted control plane's pass puts it back
    const nsA = (await execFileP('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]!)
      .filter((n) => prefixes.some((p) => n.startsWith(p)))
      .find((n) => n.startsWith(namespacePrefix([...w.hostsById].find(([, h]) => h.spec.name === 'k1')![0])))!;
    const inA = (argv: string[]) => execFileP('nsenter', [`--net=/var/run/netns/${nsA}`, ...argv]);
    const remote = (await w.hostOf(a)).spec.name === 'k1' ? b.ip! : a.ip!;
    await inA(['ip', 'route', 'del', `${remote}/32`]);
    expect(await w.ping(a, b.ip!)).toBe(false);
    await start();
    await waitFor('the route back and a reaching b', async () => (await inA(['ip', 'route'])).stdout.includes(remote) && (await w.ping(a, b.ip!)), 20_000);
    expect(await indexes()).toEqual(before);
    const view = (await (await fetch(`${cp!.url}/v2/pods/${b.id}`, { headers: { authorization: `Bearer ${cp!.adminKey}` } })).json()) as { globalNetworking: { ip: string } };
    expect(view.globalNetworking.ip).toBe(b.ip);
  }, 120_000);
});
