// Tenant network isolation (issue 8, item 4; docs/security.md), end to end: real sshd test hosts,
// the real Docker engine with its iptables rules, the control plane with its provisioner. Two test
// hosts share one engine, as every test host does, so their per-account networks must not collide.
// Never skipped: a machine without Docker's iptables rules fails here, as it should.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { dockerInspect, ensureTestImage, FIXTURE_GPUS, removeContainersByLabel, removeNetworksByLabel, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { tenantBridgeName, tenantNetworkName } from '../../provisioner/tenant-network.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitFor } from '../harness/wait-for.ts';

type J = Record<string, any>;
const GPU = 'NVIDIA H100 80GB HBM3';
// serves /etc: GET /gpufleet-image answers "main" (test-image.ts); exits on SIGTERM so a stop is quick
const SERVER = `sh -c 'trap "exit 0" TERM; httpd -f -p 7000 -h /etc & wait'`;
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
/** how long an account's network stays after its last pod on a host (tenant-network-gc.ts; 10 min by default) */
const LINGER_MS = 5_000;

let cp: TestControlPlane;
let dataDir: string;
let image: string;
let h1: TestHost;
let h2: TestHost;
const hostIds: string[] = [];
let host1 = '';
let host2 = '';
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let hostServer: Server;
let hostPort = 0;


const pod = async (key: string, id: string) => (await (await cp.api(`/v2/pods/${id}`, { key })).json()) as J;

async function runningPod(who: { key: string }, name: string, dc: string, args: string, ports: string[] = []): Promise<J> {
  const res = await cp.api('/v2/pods', { method: 'POST', key: who.key, json: { name, image, args, disk: 1, gpu: { id: GPU }, dataCenterIds: [dc], ports } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return waitFor(`pod ${name} RUNNING`, async () => {
    const p = await pod(who.key, body.id);
    if (p.status === 'ERROR') throw new Error(`pod ${name} ERROR: ${p.statusReason}`);
    return p.status === 'RUNNING' ? p : null;
  });
}

async function action(who: { key: string }, id: string, act: string): Promise<void> {
  const res = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', key: who.key, json: { action: act } });
  expect(res.status, await res.text()).toBeLessThan(300);
}

/** The pod container's networks, as the engine reports them. */
async function networksOf(podId: string): Promise<Record<string, { IPAddress: string; Gateway: string }>> {
  const c = await dockerInspect(`gpufleet-${podId}`);
  return (c?.NetworkSettings.Networks ?? {}) as Record<string, { IPAddress: string; Gateway: string }>;
}
const ipOf = async (podId: string) => Object.values(await networksOf(podId))[0]!.IPAddress;

/**
 * GET from inside a pod's container; the body, or null when it cannot connect. busybox `nc` with a
 * 3 s connect timeout (the static busybox's wget crashes in this image; nc resolves names fine).
 */
async function fetchFrom(podId: string, url: string): Promise<string | null> {
  const u = new URL(url);
  const script = 'printf "GET %s HTTP/1.0\\r\\n\\r\\n" "$1" | nc -w 3 "$2" "$3"';
  try {
    const out = (await runDocker(['exec', `gpufleet-${podId}`, 'sh', '-c', script, 'sh', u.pathname, u.hostname, u.port], { timeoutMs: 15_000 })).stdout;
    const split = out.indexOf('\r\n\r\n');
    return /^HTTP\/1\.\d 200 /.test(out) && split >= 0 ? out.slice(split + 4) : null;
  } catch {
    return null;
  }
}

const execFileP = promisify(execFile);
/** `iptables -w 5 <args>` on this machine (every test host's engine); true when it exits 0 */
const iptables = (...args: string[]) => execFileP('iptables', ['-w', '5', ...args]).then(() => true, () => false);
const bridgeOf = async (network: string) =>
  (await runDocker(['network', 'inspect', '--format', '{{index .Options "com.docker.network.bridge.name"}}', network])).stdout.trim();

const networkExists = async (name: string) =>
  runDocker(['network', 'inspect', name]).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  image = await ensureTestImage();
  const gpus = [0, 1, 2, 3].map(() => FIXTURE_GPUS.H100_80GB_HBM3);
  h1 = await startTestHost({ name: `iso1-${process.pid}`, gpus });
  h2 = await startTestHost({ name: `iso2-${process.pid}`, gpus: gpus.slice(0, 2) });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-iso-'));
  cp = await startTestControlPlane({ dataDir, background: [provisioner({ networkLingerMs: LINGER_MS })], reconcileIntervalMs: 300 });
  for (const [h, dc] of [
    [h1, `iso1-${process.pid}`],
    [h2, `iso2-${process.pid}`],
  ] as const) {
    const res = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:${h.port}`, privateKey: h.privateKey, dataCenterId: dc } });
    const body = (await res.json()) as J;
    expect(res.status, JSON.stringify(body)).toBe(201);
    hostIds.push(body.id);
  }
  [host1, host2] = hostIds as [string, string];
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  // a service on the host itself, on every address, as a serverless worker's agent would be
  hostServer = createServer((_req, res) => res.end('host-ok'));
  await new Promise<void>((r) => hostServer.listen(0, '0.0.0.0', r));
  hostPort = (hostServer.address() as { port: number }).port;
});

afterAll(async () => {
  await cp?.close();
  hostServer?.close();
  for (const id of hostIds) {
    await removeContainersByLabel(`gpufleet.host=${id}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${id}`).catch(() => undefined);
  }
  await h1?.dispose();
  await h2?.dispose();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('per-account networks', () => {
  const dc1 = () => `iso1-${process.pid}`;
  let a1: J;
  let a2: J;
  let b1: J;

  test('pods of one account share the account network of their host and reach each other unpublished', async () => {
    a1 = await runningPod(alice, 'a1', dc1(), SERVER);
    a2 = await runningPod(alice, 'a2', dc1(), SERVER);
    const name = tenantNetworkName(host1, alice.accountId);
    expect(Object.keys(await networksOf(a1.id))).toEqual([name]);
    expect(Object.keys(await networksOf(a2.id))).toEqual([name]);
    expect(await fetchFrom(a2.id, `http://${await ipOf(a1.id)}:7000/gpufleet-image`)).toBe('main\n');
    // and by container name, through the network's DNS
    expect(await fetchFrom(a2.id, `http://gpufleet-${a1.id}:7000/gpufleet-image`)).toBe('main\n');
  });

  test("a pod cannot reach another account's pod on the same host", async () => {
    b1 = await runningPod(bob, 'b1', dc1(), SERVER);
    const bobNet = tenantNetworkName(host1, bob.accountId);
    expect(Object.keys(await networksOf(b1.id))).toEqual([bobNet]);
    const b1Ip = await ipOf(b1.id);
    const a1Ip = await ipOf(a1.id);
    // both servers answer (from the host, and from a pod of their own account)...
    expect(await (await fetch(`http://${b1Ip}:7000/gpufleet-image`)).text()).toBe('main\n');
    expect(await fetchFrom(a2.id, `http://${a1Ip}:7000/gpufleet-image`)).toBe('main\n');
    // ...but not across accounts, in either direction
    expect(await fetchFrom(a1.id, `http://${b1Ip}:7000/gpufleet-image`)).toBeNull();
    expect(await fetchFrom(b1.id, `http://${a1Ip}:7000/gpufleet-image`)).toBeNull();
  });

  test("isolation is gpufleet's own: with Docker's isolation rules for these two networks deleted, neither account reaches the other", async () => {
    // What this checks: both accounts' networks are on gpufleet bridges (gf…), our rules are in place
    // (DOCKER-USER jumps to GPUFLEET-ISOLATION, one RETURN per bridge), and with Docker's own
    // DOCKER-ISOLATION-STAGE-2 DROP rules for exactly these two bridges deleted, cross-account traffic
    // still fails while traffic within alice's network still flows. Only these two bridges' rules are
    // touched (test hosts share this machine's engine and iptables with tests running beside this
    // one, whose networks keep all of theirs), and they are put back in `finally`.
    const aliceBr = tenantBridgeName(host1, alice.accountId);
    const bobBr = tenantBridgeName(host1, bob.accountId);
    expect(await bridgeOf(tenantNetworkName(host1, alice.accountId))).toBe(aliceBr);
    expect(await bridgeOf(tenantNetworkName(host1, bob.accountId))).toBe(bobBr);
    expect(await iptables('-C', 'DOCKER-USER', '-i', 'gf+', '-o', 'gf+', '-j', 'GPUFLEET-ISOLATION')).toBe(true);
    for (const br of [aliceBr, bobBr]) expect(await iptables('-C', 'GPUFLEET-ISOLATION', '-i', br, '-o', br, '-j', 'RETURN')).toBe(true);
    const b1Ip = await ipOf(b1.id);
    const a1Ip = await ipOf(a1.id);
    const removed: string[] = [];
    try {
      for (const br of [aliceBr, bobBr]) {
        while (await iptables('-D', 'DOCKER-ISOLATION-STAGE-2', '-o', br, '-j', 'DROP')) if (!removed.includes(br)) removed.push(br);
      }
      expect(removed).toEqual([aliceBr, bobBr]); // Docker had them: the deletion is real
      expect(await fetchFrom(a1.id, `http://${b1Ip}:7000/gpufleet-image`)).toBeNull();
      expect(await fetchFrom(b1.id, `http://${a1Ip}:7000/gpufleet-image`)).toBeNull();
      expect(await fetchFrom(a2.id, `http://${a1Ip}:7000/gpufleet-image`)).toBe('main\n');
      // and this can fail: a hole in our chain for just these two bridges lets the traffic through,
      // since nothing of Docker's stops it now
      const hole = [['-i', aliceBr, '-o', bobBr], ['-i', bobBr, '-o', aliceBr]];
      try {
        for (const h of hole) expect(await iptables('-I', 'GPUFLEET-ISOLATION', '1', ...h, '-j', 'RETURN')).toBe(true);
        expect(await fetchFrom(a1.id, `http://${b1Ip}:7000/gpufleet-image`)).toBe('main\n');
      } finally {
        for (const h of hole) while (await iptables('-D', 'GPUFLEET-ISOLATION', ...h, '-j', 'RETURN'));
      }
      expect(await fetchFrom(a1.id, `http://${b1Ip}:7000/gpufleet-image`)).toBeNull();
    } finally {
      for (const br of removed) if (!(await iptables('-C', 'DOCKER-ISOLATION-STAGE-2', '-o', br, '-j', 'DROP'))) await iptables('-I', 'DOCKER-ISOLATION-STAGE-2', '1', '-o', br, '-j', 'DROP');
    }
  });

  test('the provisioner puts a deleted isolation rule back on its next pass', async () => {
    const aliceBr = tenantBridgeName(host1, alice.accountId);
    expect(await iptables('-D', 'GPUFLEET-ISOLATION', '-i', aliceBr, '-o', aliceBr, '-j', 'RETURN')).toBe(true);
    await waitFor('the RETURN rule back', async () => iptables('-C', 'GPUFLEET-ISOLATION', '-i', aliceBr, '-o', aliceBr, '-j', 'RETURN'), 10_000);
    expect(await fetchFrom(a2.id, `http://${await ipOf(a1.id)}:7000/gpufleet-image`)).toBe('main\n');
  });

  test("a network of an earlier version (Docker's own br- bridge) is recreated on a gpufleet bridge when nothing is on it", async () => {
    const carol = await cp.newAccount();
    const name = tenantNetworkName(host1, carol.accountId);
    await runDocker(['network', 'create', `--label=gpufleet.host=${host1}`, `--label=gpufleet.account=${carol.accountId}`, name]);
    expect(await bridgeOf(name)).not.toMatch(/^gf/);
    const c1 = await runningPod(carol, 'c1', dc1(), SLEEPER);
    expect(Object.keys(await networksOf(c1.id))).toEqual([name]);
    expect(await bridgeOf(name)).toBe(tenantBridgeName(host1, carol.accountId));
    await action(carol, c1.id, 'terminate');
  });

  test('a gpufleet bridge without its network (the host changed behind our back) does not stop the account\'s pod', async () => {
    // the bridge says the network is there, docker says it is not: the pod asks docker again and gets it made
    const dave = await cp.newAccount();
    const name = tenantNetworkName(host1, dave.accountId);
    const br = tenantBridgeName(host1, dave.accountId);
    await execFileP('ip', ['link', 'add', br, 'type', 'bridge']);
    try {
      const d1 = await runningPod(dave, 'd1', dc1(), SLEEPER);
      expect(Object.keys(await networksOf(d1.id))).toEqual([name]);
      expect(await bridgeOf(name)).toBe(br);
      expect(await iptables('-C', 'GPUFLEET-ISOLATION', '-i', br, '-o', br, '-j', 'RETURN')).toBe(true);
      await action(dave, d1.id, 'terminate');
      await waitFor(`network ${name} removed`, async () => !(await networkExists(name)));
    } finally {
      await execFileP('ip', ['link', 'del', br]).catch(() => undefined);
      while (await iptables('-D', 'GPUFLEET-ISOLATION', '-i', br, '-o', br, '-j', 'RETURN'));
    }
  });

  test('a published port still answers at the host address', async () => {
    const p = await runningPod(alice, 'a-pub', dc1(), SERVER, ['7000/http']);
    const port = (p.runtime.ports as J[]).find((x) => x.private === 7000)!;
    expect(port.ip).toBe(h1.address);
    expect(await (await fetch(`http://${port.ip}:${port.public}/gpufleet-image`)).text()).toBe('main\n');
    await action(alice, p.id, 'terminate');
  });

  test('a pod reaches its host at the network gateway and at host.docker.internal', async () => {
    const net = JSON.parse((await runDocker(['network', 'inspect', tenantNetworkName(host1, alice.accountId)])).stdout) as J[];
    const gateway = net[0]!.IPAM.Config[0].Gateway as string;
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // the gateway is the pod's default route
    const route = (await runDocker(['exec', `gpufleet-${a1.id}`, 'ip', 'route'])).stdout;
    expect(route).toContain(`default via ${gateway}`);
    expect(await fetchFrom(a1.id, `http://${gateway}:${hostPort}/`)).toBe('host-ok');
    expect(await fetchFrom(a1.id, `http://host.docker.internal:${hostPort}/`)).toBe('host-ok');
  });

  test('network names do not collide between hosts that share one Docker engine', async () => {
    const a3 = await runningPod(alice, 'a3', `iso2-${process.pid}`, SLEEPER);
    expect(a3.machineId).toBe(host2);
    const on1 = tenantNetworkName(host1, alice.accountId);
    const on2 = tenantNetworkName(host2, alice.accountId);
    expect(on2).not.toBe(on1);
    expect(Object.keys(await networksOf(a3.id))).toEqual([on2]);
    const labels = JSON.parse((await runDocker(['network', 'inspect', '--format', '{{json .Labels}}', on2])).stdout) as J;
    expect(labels).toEqual({ 'gpufleet.host': host2, 'gpufleet.account': alice.accountId });
    expect(await networkExists(on1)).toBe(true);
  });

  test("a stopped pod keeps its account's network and starts again", async () => {
    const name = tenantNetworkName(host1, bob.accountId);
    await action(bob, b1.id, 'stop');
    await waitFor('b1 container stopped', async () => (await dockerInspect(`gpufleet-${b1.id}`))?.State.Running === false);
    await new Promise((r) => setTimeout(r, 1500)); // several passes
    expect(await networkExists(name)).toBe(true);
    await action(bob, b1.id, 'start');
    await waitFor('b1 RUNNING again', async () => (await pod(bob.key, b1.id)).status === 'RUNNING');
  });

  test("the account's network on a host stays a while after its last pod there is terminated, then is removed", async () => {
    const name = tenantNetworkName(host1, alice.accountId);
    await action(alice, a1.id, 'terminate');
    await waitFor('a1 container removed', async () => (await dockerInspect(`gpufleet-${a1.id}`)) === null);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await networkExists(name)).toBe(true); // a2 still uses it
    await action(alice, a2.id, 'terminate');
    await waitFor('a2 container removed', async () => (await dockerInspect(`gpufleet-${a2.id}`)) === null);
    const gone = Date.now();
    expect(await networkExists(name)).toBe(true); // kept for the account's next pod here
    await waitFor(`network ${name} removed`, async () => !(await networkExists(name)));
    expect(Date.now() - gone).toBeGreaterThan(LINGER_MS - 1000);
    // other accounts' networks here, and the account's network on the other host, stay
    expect(await networkExists(tenantNetworkName(host1, bob.accountId))).toBe(true);
    expect(await networkExists(tenantNetworkName(host2, alice.accountId))).toBe(true);
  });

  test('a restarted control plane removes a network no pod of its host needs', async () => {
    const ghost = tenantNetworkName(host1, 'acct_gone');
    await runDocker(['network', 'create', `--label=gpufleet.host=${host1}`, '--label=gpufleet.account=acct_gone', ghost]);
    await cp.close();
    cp = await startTestControlPlane({ dataDir, background: [provisioner({ networkLingerMs: LINGER_MS })], reconcileIntervalMs: 300 });
    await waitFor(`network ${ghost} removed`, async () => !(await networkExists(ghost)));
    // bob's running pod keeps its network through the restart
    expect(await networkExists(tenantNetworkName(host1, bob.accountId))).toBe(true);
    expect((await pod(bob.key, b1.id)).status).toBe('RUNNING');
  });
});
