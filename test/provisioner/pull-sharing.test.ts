// One tenant's slow pull does not stall the host (issue 18, item 2; docs/provisioner.md "Image
// pulls"), end to end: a registry that trickles (test/harness/trickle-registry.ts), a real sshd test
// host, the real Docker engine, the control plane with its provisioner. Tenant A's pod pulls from the
// trickling registry; tenant B's pod on the same host, whose image is local, must run within seconds
// while A's pod is still PROVISIONING with the pull's progress in its reason. Then the registry goes
// silent mid-blob: the pull is declared stalled after the configured window (short here), the pod
// says so in our words and waits to try again, and the daemon's download is really cut.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, FIXTURE_GPUS, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { startTrickleRegistry, type TrickleRegistry } from '../harness/trickle-registry.ts';
import { waitFor as waitForHarness } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';

type J = Record<string, any>;
type Account = { accountId: string; key: string };
const GPU = 'NVIDIA H100 80GB HBM3';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const STALL_MS = 3000;
/** the trickle: half the layer at once, then 4 kB a second: about 30 s for the rest */
const TRICKLE = { layerBytes: 256 * 1024, chunkBytes: 4096, tickMs: 1000 };

let cp: TestControlPlane;
let registry: TrickleRegistry;
const registries: TrickleRegistry[] = [];
let host: TestHost;
let hostId = '';
let localImage = '';
let a: Account;
let b: Account;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 100);
/** The test hosts drive this machine's engine: their `docker pull` commands show in its process list. */
const pullsRunning = async (ref: string): Promise<boolean> =>
  (await promisify(execFile)('ps', ['-eo', 'args'])).stdout.split('\n').some((l) => l.startsWith('docker pull') && l.includes(ref));
const getPod = async (who: Account, id: string): Promise<J> => (await (await cp.api(`/v2/pods/${id}`, { key: who.key })).json()) as J;

async function createPod(who: Account, name: string, image: string): Promise<J> {
  const res = await cp.api('/v2/pods', { method: 'POST', key: who.key, json: { name, image, args: SLEEPER, disk: 1, gpu: { id: GPU } } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

/** Nothing of docker's or the registry's own text: our words and the numbers we computed. */
function expectOurWords(reason: string): void {
  expect(reason).not.toMatch(/error|daemon|manifest|blob|Downloading|http|sha256/i);
}

beforeAll(async () => {
  localImage = await ensureTestImage();
  registry = await startTrickleRegistry(TRICKLE);
  const second = await startTrickleRegistry(TRICKLE);
  registries.push(second);
  host = await startTestHost({ name: `pulls-${process.pid}`, gpus: [0, 1, 2, 3].map(() => FIXTURE_GPUS.H100_80GB_HBM3) });
  cp = await startTestControlPlane({
    background: [provisioner()],
    reconcileIntervalMs: 300,
    config: { pullStallMs: STALL_MS, allowedRegistries: [registry.address, second.address] },
  });
  hostId = await enrolTestHost(cp, host);
  a = await cp.newAccount();
  b = await cp.newAccount();
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
  for (const r of [registry, ...registries]) {
    if (!r) continue;
    await r.close();
    for (const repo of ['slow/a', 'slow/stopped']) await runDocker(['rmi', '-f', r.ref(repo)]).catch(() => undefined);
  }
});

describe('image pulls beside the reconcile pass', () => {
  test('a trickling pull of one tenant does not hold back another tenant pod on the same host; then it stalls', async () => {
    const slow = await createPod(a, 'slow-pull', registry.ref('slow/a'));
    // A's pull is under way: its reason shows the bytes docker reported
    const pulling = await waitFor('A pulling with progress', async () => {
      const p = await getPod(a, slow.id);
      return /^pulling image \S+ \([\d.]+ kB of [\d.]+ kB, 0 of 1 layers done\)$/.test(p.statusReason ?? '') ? p : null;
    });
    expect(pulling.status).toBe('PROVISIONING');
    expect(registry.openBlobs).toBe(1);
    // a second pod of the same image on the host joins that pull: no second docker pull
    const twin = await createPod(b, 'same-image', registry.ref('slow/a'));
    await waitFor('twin pulling', async () => /^pulling image .+ kB of/.test((await getPod(b, twin.id)).statusReason ?? ''));

    // B's pod, local image, same host: running within a few seconds, well below the trickle's ~30 s
    const started = performance.now();
    const fast = await createPod(b, 'local-image', localImage);
    const running = await waitFor('B running', async () => ((await getPod(b, fast.id)).status === 'RUNNING' ? true : null), 15_000);
    const tookMs = performance.now() - started;
    expect(running).toBe(true);
    expect(tookMs).toBeLessThan(8000);
    expect((await getPod(b, fast.id)).hostId ?? hostId).toBe(hostId);

    // and A is still pulling, its reason moving on
    const still = await getPod(a, slow.id);
    expect(still.status).toBe('PROVISIONING');
    expect(still.statusReason).toMatch(/^pulling image .+ kB of .+ kB/);
    expect(registry.manifestAsks('slow/a')).toBe(1);

    // the registry goes silent mid-blob: stalled after STALL_MS, in our words, and to be tried again
    registry.pause();
    const silentAt = performance.now();
    const stalled = await waitFor('A stalled', async () => {
      const p = await getPod(a, slow.id);
      return /stalled/.test(p.statusReason ?? '') ? p : null;
    }, STALL_MS + 15_000);
    const stallMs = performance.now() - silentAt;
    expect(stallMs).toBeGreaterThanOrEqual(STALL_MS - 1100); // the last progress was up to a tick before the pause
    expect(stalled.status).toBe('PROVISIONING');
    expect(stalled.statusReason).toBe(`image pull stalled (no progress for ${STALL_MS / 1000} s); trying again in 10 s`);
    expectOurWords(stalled.statusReason);
    // the pull was cut: no `docker pull` of it runs on the host any more (the daemon itself keeps its
    // socket to a silent registry until that sends or closes: docs/provisioner.md)
    await waitFor('docker pull ended', async () => !(await pullsRunning(registry.ref('slow/a'))), 10_000);
    expect(await dockerInspect(`gpufleet-${slow.id}`)).toBeNull();
    expect((await getPod(b, twin.id)).statusReason).toBe(stalled.statusReason);
    await cp.api(`/v2/pods/${slow.id}`, { method: 'DELETE', key: a.key });
    await cp.api(`/v2/pods/${twin.id}`, { method: 'DELETE', key: b.key });
    await cp.api(`/v2/pods/${fast.id}`, { method: 'DELETE', key: b.key });
  }, 120_000);

  test('a pod stopped while its image is pulling never starts, and its pull is cancelled', async () => {
    // a registry of its own: the daemon shares a layer's download between pulls, and the first test's
    // download of this registry's layer still hangs on its silent socket
    const registry = registries[0]!;
    const pod = await createPod(a, 'stopped-mid-pull', registry.ref('slow/stopped'));
    await waitFor('pulling', async () => /^pulling image .+ kB of/.test((await getPod(a, pod.id)).statusReason ?? ''));
    expect(registry.openBlobs).toBe(1);
    const res = await cp.api(`/v2/pods/${pod.id}/action`, { method: 'POST', key: a.key, json: { action: 'stop' } });
    expect(res.status).toBeLessThan(300);
    // nobody waits for the pull any more: cancelled, so the download connection closes
    await waitFor('pull cancelled', async () => registry.openBlobs === 0, 10_000);
    // the registry would now finish at once: nothing pulls, nothing starts
    registry.resume({ fast: true });
    await new Promise((r) => setTimeout(r, 2000));
    const p = await getPod(a, pod.id);
    expect(p.status).toBe('EXITED');
    expect(p.desiredStatus).toBe('EXITED');
    expect(await dockerInspect(`gpufleet-${pod.id}`)).toBeNull();
    await cp.api(`/v2/pods/${pod.id}`, { method: 'DELETE', key: a.key });
  }, 60_000);
});
