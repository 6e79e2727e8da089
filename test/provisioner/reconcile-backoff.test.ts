// A step that fails on a live host is tried again after a backoff (1 s, 2 s, 4 s, … up to 60 s,
// shortened by up to a fifth at random), not at every pass; a user's action on the pod is acted on at
// once and starts the backoff over (provisioner/retry-backoff.ts). The faults are made on a real sshd
// test host by a docker wrapper on its PATH that fails the next N calls of an operation and records
// when each call reached the host (testing/docker-faults.ts); passes run every 300 ms, so a
// retry at every pass would show as calls 300 ms apart.
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, runDocker, startTestHost, type DockerFaults, type TestHost } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let faults: DockerFaults;
let image: string;
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
/** a retry comes at most this long after its wait ended (a pass on a loaded machine) */
const SLACK_MS = 2500;

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `backoff-${process.pid}`, dockerFaults: true });
  faults = host.dockerFaults!;
  // an account's network goes with its last pod: no network of an earlier test is left as a spare,
  // which a failed create would remove before creating once more (two calls in one try)
  cp = await startTestControlPlane({ background: [provisioner({ networkLingerMs: 0 })], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host);
});

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
});

type Pod = Record<string, any>;

/** a new account (so its network is not on the host yet) and its CPU pod */
async function createPod(name: string): Promise<{ id: string; key: string; accountId: string }> {
  const { key, accountId } = await cp.newAccount();
  const res = await cp.api('/v2/pods', { method: 'POST', key, json: { name, image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } } });
  const body = (await res.json()) as Pod;
  expect(res.status, JSON.stringify(body)).toBe(201);
  const created = { id: body.id as string, key, accountId };
  onTestFinished(() => terminate(created));
  return created;
}

const pod = async (id: string, key: string) => (await (await cp.api(`/v2/pods/${id}`, { key })).json()) as Pod;
async function podWhere(id: string, key: string, what: string, ok: (p: Pod) => boolean, timeoutMs = 30_000): Promise<Pod> {
  let last: Pod = {};
  return waitFor(what, async () => {
    last = await pod(id, key);
    return ok(last) ? last : null;
  }, timeoutMs, 50).catch((err: unknown) => {
    throw new Error(`${String(err)}; the pod reads ${last.status}: ${last.statusReason}`);
  });
}

/** frees the host's vCPUs for the next test, and waits for the account's network to go */
async function terminate(p: { id: string; key: string; accountId: string }): Promise<void> {
  expect((await cp.api(`/v2/pods/${p.id}`, { method: 'DELETE', key: p.key })).status).toBe(204);
  await waitFor('the account network removed', async () => (await runDocker(['network', 'ls', '-q', '--filter', `label=gpufleet.account=${p.accountId}`])).stdout.trim() === '');
}

const gaps = (calls: number[]) => calls.slice(1).map((t, i) => t - calls[i]!);

/** each gap is the wait before it (jittered down by up to 20%), plus at most a pass's latency */
function expectBackoff(observed: number[], waits: number[]): void {
  expect(observed.length, `gaps ${observed.join(', ')} ms`).toBe(waits.length);
  observed.forEach((g, i) => {
    expect(g, `gap ${i + 1} of ${observed.join(', ')} ms`).toBeGreaterThanOrEqual(waits[i]! * 0.8 - 50);
    expect(g, `gap ${i + 1} of ${observed.join(', ')} ms`).toBeLessThanOrEqual(waits[i]! + SLACK_MS);
  });
}

test('a network that fails to set up on the host three times is tried again after about 1, 2 and 4 s, not at every pass', async () => {
  await faults.failNext('network-create', 3);
  const before = (await faults.calls('network-create')).length;
  const created = await createPod('net-backoff');
  const { id, key } = created;
  // while it waits, the pod says what failed and when it is tried again, in our words
  const waiting = await podWhere(id, key, 'a reason naming the retry', (p) => /times in a row\); trying again in \d+ s$/.test(p.statusReason ?? ''));
  expect(waiting.statusReason).toMatch(/^the pod's network could not be set up on the host \((2|3) times in a row\); trying again in [1-4] s$/);
  expect(waiting.statusReason).not.toMatch(/docker fault|could not create network/);
  await podWhere(id, key, 'RUNNING', (p) => p.status === 'RUNNING', 40_000);
  const calls = (await faults.calls('network-create')).slice(before);
  // three failures and the create that worked: no fifth call (the network is there now)
  expectBackoff(gaps(calls), [1000, 2000, 4000]);
  expect((await pod(id, key)).statusReason).toBeNull();
}, 60_000);

test("a user's update of a pod waiting out its backoff is acted on at once, and the backoff starts over", async () => {
  await faults.failNext('network-create', 1000);
  const before = (await faults.calls('network-create')).length;
  const created = await createPod('update-resets');
  const { id, key } = created;
  // four failures: the next try waits 8 s (6.4 to 8 with jitter)
  const four = (await faults.waitCalls('network-create', before + 4, 30_000)).slice(before);
  expectBackoff(gaps(four), [1000, 2000, 4000]);
  const patched = Date.now();
  const res = await cp.api(`/v2/pods/${id}`, { method: 'PATCH', key, json: { env: { CHANGED: '1' } } });
  expect(res.status, await res.text()).toBe(200);
  const fifth = (await faults.waitCalls('network-create', before + 5, 10_000))[before + 4]!;
  expect(fifth - patched, 'the update waited for the backoff').toBeLessThan(SLACK_MS);
  // the new intent failed once: its next try is 1 s later, not 16
  const sixth = (await faults.waitCalls('network-create', before + 6, 10_000))[before + 5]!;
  expectBackoff([sixth - fifth], [1000]);
  await faults.failNext('network-create', 0);
  const running = await podWhere(id, key, 'RUNNING', (p) => p.status === 'RUNNING', 20_000);
  expect(running.env).toMatchObject({ CHANGED: '1' });
}, 60_000);

test('a docker stop that fails on the host twice is tried again after about 1 and 2 s, and the pod then reads stopped', async () => {
  const created = await createPod('stop-backoff');
  const { id, key } = created;
  await podWhere(id, key, 'RUNNING', (p) => p.status === 'RUNNING');
  await faults.failNext('stop', 2);
  const before = (await faults.calls('stop')).length;
  const res = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', key, json: { action: 'stop' } });
  expect(res.status, await res.text()).toBe(200);
  const waiting = await podWhere(id, key, 'a reason naming the retry', (p) => /trying again in/.test(p.statusReason ?? ''));
  expect(waiting.statusReason).toMatch(/^the host did not stop the container( \(2 times in a row\))?; trying again in [12] s$/);
  const stopped = await podWhere(id, key, 'stopped', (p) => p.statusReason === 'container stopped; GPUs released');
  expect(stopped.status).toBe('EXITED');
  const calls = (await faults.calls('stop')).slice(before);
  expectBackoff(gaps(calls), [1000, 2000]);
}, 60_000);
