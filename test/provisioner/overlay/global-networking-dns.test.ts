// Internal DNS of the overlay on two namespace test hosts (issue 21; docs/networking.md, "Internal DNS"):
// inside every globally-networked pod of an account, `<pod id>.<domain>` of each of the account's pods
// resolves to its overlay address (its own too, and across hosts), the other account's names never do;
// other names still resolve through the pod's former resolver (Docker's); another account's pod cannot
// reach the resolver at all; the resolver is contained (nobody, no capability, its own mount namespace
// with a read-only root where the host's files and other accounts' names are not); names appear within 5 s of a pod becoming RUNNING and are NXDOMAIN within
// 5 s of a stop or a termination; turning globalNetworking on or off live gives or takes the resolver
// (the pod's resolv.conf back as it was); a resolver that cannot start does not hold the overlay back.
import { execFile, spawn } from 'node:child_process';
import { readFile, readlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { accountNamespace, DNS_ROOT } from '../../../provisioner/index.ts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DNS_ADDRESS } from '../../../provisioner/overlay/overlay-dns.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { FIXTURE_GPUS, TEST_IMAGE } from '../../../testing/index.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { PYTHON, startOverlayWorld, type OverlayWorld, type StartedOverlayWorld, type WorldPod } from '../../harness/overlay-world.ts';

const execFileP = promisify(execFile);
const H = FIXTURE_GPUS.H100_80GB_HBM3;
const DOMAIN = 'runpod.internal';
let world: StartedOverlayWorld;
let cp: TestControlPlane;
let w: OverlayWorld;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let al1: WorldPod;
let al2: WorldPod;
let bo1: WorldPod;
let plain: WorldPod;
const name = (p: { id: string }) => `${p.id}.${DOMAIN}`;

const createOn = (host: string, key: string, account: string, podName: string, globalNetworking: boolean) =>
  w.createOn(host, key, account, podName, { image: TEST_IMAGE, globalNetworking });

beforeAll(async () => {
  world = await startOverlayWorld([
    { name: 'd1', dataCenterId: 'DC-A', forward: 'DROP', gpus: [H, H, H] },
    { name: 'd2', dataCenterId: 'DC-A', forward: 'ACCEPT', gpus: [H, H, H] },
  ]);
  ({ cp, w } = world);
  alice = await cp.newAccount('read_write', 1000);
  bob = await cp.newAccount('read_write', 1000);
  al1 = await createOn('d1', alice.key, 'alice', 'al-1', true);
  bo1 = await createOn('d1', bob.key, 'bob', 'bo-1', true);
  al2 = await createOn('d2', alice.key, 'alice', 'al-2', true);
  plain = await createOn('d2', alice.key, 'alice', 'al-plain', false);
  for (const p of [al1, al2, bo1]) await waitFor(`${p.name}'s resolver`, async () => (await w.lookup(p, name(p))).ips.includes(p.ip!), 20_000);
}, 300_000);

afterAll(async () => {
  await world?.close();
}, 120_000);

describe('internal DNS', () => {
  test("in each pod, the account's names resolve to their overlay addresses (its own, and across hosts); the other account's are NXDOMAIN", async () => {
    expect((await w.hostOf(al1)).spec.name).toBe('d1');
    expect((await w.hostOf(al2)).spec.name).toBe('d2');
    for (const [from, to] of [[al1, al1], [al1, al2], [al2, al1], [al2, al2], [bo1, bo1]] as const)
      expect({ from: from.name, to: to.name, ...(await w.lookup(from, name(to))) }).toEqual({ from: from.name, to: to.name, ips: [to.ip], nx: false });
    for (const [from, to] of [[al1, bo1], [al2, bo1], [bo1, al1], [bo1, al2]] as const)
      expect({ from: from.name, to: to.name, ...(await w.lookup(from, name(to))) }).toEqual({ from: from.name, to: to.name, ips: [], nx: true });
    // a name of the domain that is no pod's: NXDOMAIN, answered here (not sent on)
    expect((await w.dns(al1, DNS_ADDRESS, `nosuchpod.${DOMAIN}`))).toBe('rcode=3 a=');
  }, 60_000);

  test("other names resolve as before, through the pod's former resolver (Docker's, which knows the container's own name)", async () => {
    const h = await w.hostOf(al1);
    const dockerIp = (await h.docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', `gpufleet-${al1.id}`])).stdout.trim();
    expect(dockerIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect((await w.lookup(al1, `gpufleet-${al1.id}`)).ips).toEqual([dockerIp]);
    const conf = (await w.exec(al1, ['cat', '/etc/resolv.conf']))!;
    expect(conf.split('\n').filter((l) => l.startsWith('nameserver'))).toEqual([`nameserver ${DNS_ADDRESS}`]);
    // the pod without globalNetworking keeps Docker's resolver
    expect(await w.exec(plain, ['cat', '/etc/resolv.conf'])).not.toContain(DNS_ADDRESS);
  }, 60_000);

  test("another account's pod cannot reach a pod's resolver, over the overlay, Docker's network or its own loopback", async () => {
    const h = await w.hostOf(al1);
    const dockerIp = (await h.docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', `gpufleet-${al1.id}`])).stdout.trim();
    // bo-1 runs on al-1's host
    expect((await w.hostOf(bo1)).spec.name).toBe('d1');
    for (const server of [al1.ip!, dockerIp]) expect(await w.dns(bo1, server, name(al1))).toBe('timeout');
    // its own resolver knows only bob's names
    expect(await w.dns(bo1, DNS_ADDRESS, name(al1))).toBe('rcode=3 a=');
    // alice's own pods do not reach another pod's resolver either (it listens on that pod's loopback only)
    expect(await w.dns(al2, al1.ip!, name(al1))).toBe('timeout');
  }, 60_000);

  test("a pod's resolver is contained: nobody with no capability, no new privileges, and from its own view only the system's programs, its account's names and its upstream, all read-only", async () => {
    const dir = `${DNS_ROOT}/${accountNamespace(world.idOf('d1'), alice.accountId)}`;
    const dp = Number((await readFile(`${dir}/${al1.id}.pid`, 'utf8')).trim());
    expect(await readFile(`/proc/${dp}/comm`, 'utf8')).toBe('dnsmasq\n');
    // in the pod's network namespace, in a mount namespace of its own
    expect(await readlink(`/proc/${dp}/ns/net`)).toBe(await readlink(`/proc/${await w.pid(al1)}/ns/net`));
    expect(await readlink(`/proc/${dp}/ns/mnt`)).not.toBe(await readlink('/proc/self/ns/mnt'));
    const status = Object.fromEntries((await readFile(`/proc/${dp}/status`, 'utf8')).split('\n').map((l) => l.split(':\t')).filter((kv) => kv.length === 2));
    expect(status.Uid).toBe('65534\t65534\t65534\t65534');
    expect(status.Gid).toBe('65534\t65534\t65534\t65534');
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) expect({ set, caps: status[set] }).toEqual({ set, caps: '0000000000000000' });
    // net_bind_service, setgid, setuid: what it needed to bind 53 and become nobody, nothing else ever
    expect(status.CapBnd).toBe('00000000000004c0');
    expect(status.NoNewPrivs).toBe('1');
    // its view: its root, its user
    const view = (script: string) =>
      execFileP('nsenter', ['-t', String(dp), '-m', '-r', '-w', '-S', '65534', '-G', '65534', 'sh', '-c', script]).then((r) => r.stdout, (e: { stdout?: string; stderr?: string }) => `failed: ${e.stderr ?? ''}`);
    expect((await view('ls -A /')).split('\n').filter(Boolean).sort()).toEqual(expect.arrayContaining(['dev', 'etc', 'hosts.d', 'run', 'usr']));
    expect((await view('ls -A /')).split('\n').filter((f) => ['proc', 'sys', 'root', 'home', 'var', 'tmp', 'boot'].includes(f))).toEqual([]);
    expect((await view('ls -A /etc')).split('\n').filter(Boolean).sort()).toEqual(['group', 'passwd', 'upstream']);
    expect(await view('cat /etc/shadow')).toMatch(/^failed: [\s\S]*No such file/);
    expect(await view(`cat ${DNS_ROOT}/*/hosts.d/names`)).toMatch(/^failed: /);
    expect(await view('ls /proc/1')).toMatch(/^failed: /);
    const names = await view('cat /hosts.d/names');
    expect(names).toContain(name(al1));
    expect(names).not.toContain(name(bo1));
    for (const f of ['/x', '/usr/x', '/hosts.d/x', '/etc/upstream', '/run/x', '/dev/x'])
      expect({ f, wrote: await view(`echo x > ${f} && echo wrote`) }).toEqual({ f, wrote: expect.stringMatching(/^failed: [\s\S]*(Read-only|Permission denied)/) });
    // nothing of its sandbox is mounted on the host
    expect(await readFile('/proc/self/mountinfo', 'utf8')).not.toContain(`${dir}/${al1.id}.root`);
  }, 60_000);

  test('a new pod resolves in the others within 5 s of RUNNING; NXDOMAIN within 5 s of its stop, and of a termination', async () => {
    const res = await cp.api('/v2/pods', { method: 'POST', key: alice.key, json: { name: 'al-3', image: TEST_IMAGE, args: 'sleep 3600', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' }, globalNetworking: true } });
    const created = (await res.json()) as { id: string; globalNetworking: { ip: string } };
    expect(res.status).toBe(201);
    await w.running(created.id, alice.key);
    const running = Date.now();
    for (const from of [al1, al2]) await waitFor(`al-3 in ${from.name}`, async () => (await w.lookup(from, name(created))).ips.includes(created.globalNetworking.ip), 5_000);
    expect(Date.now() - running).toBeLessThan(5_000 + 1_000);

    expect((await cp.api(`/v2/pods/${created.id}/action`, { method: 'POST', key: alice.key, json: { action: 'stop' } })).status).toBe(200);
    const stopped = Date.now();
    for (const from of [al1, al2]) await waitFor(`al-3 gone from ${from.name}`, async () => (await w.lookup(from, name(created))).nx, 5_000);
    expect(Date.now() - stopped).toBeLessThan(5_000 + 1_000);

    expect((await cp.api(`/v2/pods/${created.id}/action`, { method: 'POST', key: alice.key, json: { action: 'start' } })).status).toBe(200);
    await w.running(created.id, alice.key);
    await waitFor('al-3 back in al-1', async () => (await w.lookup(al1, name(created))).ips.includes(created.globalNetworking.ip), 5_000);
    expect((await cp.api(`/v2/pods/${created.id}`, { method: 'DELETE', key: alice.key })).status).toBeLessThan(300);
    const terminated = Date.now();
    for (const from of [al1, al2]) await waitFor(`al-3 gone from ${from.name}`, async () => (await w.lookup(from, name(created))).nx, 5_000);
    expect(Date.now() - terminated).toBeLessThan(5_000 + 1_000);
  }, 120_000);

  test('turned on live, a pod gets the resolver within 5 s; turned off, its resolv.conf is as it was and the names are gone', async () => {
    const before = (await w.exec(plain, ['cat', '/etc/resolv.conf']))!;
    expect((await cp.api(`/v2/pods/${plain.id}`, { method: 'PATCH', key: alice.key, json: { globalNetworking: true } })).status).toBe(200);
    const ip = (await w.view(plain, alice.key)).globalNetworking.ip as string;
    await waitFor('al-plain resolves al-1 and itself', async () => (await w.lookup(plain, name(al1))).ips.includes(al1.ip!) && (await w.lookup(plain, name(plain))).ips.includes(ip), 5_000);
    await waitFor('al-1 resolves al-plain', async () => (await w.lookup(al1, name(plain))).ips.includes(ip), 5_000);

    expect((await cp.api(`/v2/pods/${plain.id}`, { method: 'PATCH', key: alice.key, json: { globalNetworking: false } })).status).toBe(200);
    await waitFor("al-plain's resolv.conf as it was", async () => (await w.exec(plain, ['cat', '/etc/resolv.conf'])) === before, 5_000);
    await waitFor('al-plain gone from al-1', async () => (await w.lookup(al1, name(plain))).nx, 5_000);
    // nothing answers on the resolver's address in it any more
    expect(await w.dns(plain, DNS_ADDRESS, name(al1))).toBe('timeout');
  }, 60_000);

  test('a resolver that cannot start (port 53 taken in the pod) leaves the overlay working; it starts at a later verify once the port is free', async () => {
    const busy = await createOn('d2', alice.key, 'alice', 'al-busy', false);
    const pid = await w.pid(busy);
    const holder = spawn('nsenter', ['-t', String(pid), '-n', PYTHON, '-c', `import socket,time; s=socket.socket(2,2); s.bind(('${DNS_ADDRESS}',53)); print('bound', flush=True); time.sleep(120)`], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      const before = (await w.exec(busy, ['cat', '/etc/resolv.conf']))!;
      expect((await cp.api(`/v2/pods/${busy.id}`, { method: 'PATCH', key: alice.key, json: { globalNetworking: true } })).status).toBe(200);
      await waitFor('al-busy on the overlay', async () => (await w.podnet1(busy)) !== null && (await w.ping(busy, al1.ip!)), 5_000);
      // no resolver of ours there: the pod keeps its resolv.conf
      expect(await w.exec(busy, ['cat', '/etc/resolv.conf'])).toBe(before);
    } finally {
      holder.kill('SIGKILL');
    }
    // the next verify (GPUFLEET_OVERLAY_VERIFY, 10 s) starts it
    await waitFor('al-busy resolves al-1', async () => (await w.lookup(busy, name(al1))).ips.includes(al1.ip!), 20_000, 500);
  }, 60_000);
});
