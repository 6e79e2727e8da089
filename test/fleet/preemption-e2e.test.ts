// Preemption end to end (docs/teams.md "Interruptible pods"): a real sshd test host with one fixture
// GPU, the real Docker engine and the provisioner. The pods' containers trap SIGTERM and print when
// they got it (docker's own log timestamps, to the nanosecond), and keep running, so SIGKILL is what
// ends them: the test reads the signals in order and their timing from the container's log and
// `docker inspect` (exit code 137 = killed, FinishedAt). Checked: an on-demand create on the full
// host preempts the spot pod, whose container gets SIGTERM, then SIGKILL after the 5 s grace; the
// on-demand container starts only after the victim's stopped and is RUNNING within grace + 15 s; a
// higher bid preempts a lower one; podBidResume starts the preempted pod again in its own container
// (disk kept) by outbidding the pod that holds the GPU; and when the victim's `docker stop` fails on
// the host (the host's docker wrapper, testing/docker-faults.ts), the new pod waits, its container
// never running beside the victim's, and starts once a retried stop has gone through.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, FIXTURE_GPUS, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';
import { runpodctl } from '../api/graphql/gql-client.ts';
import { BID_RESUME_POD } from '../api/graphql/runpodctl-texts.ts';

type Json = Record<string, any>;

const RTX4090 = 'NVIDIA GeForce RTX 4090';
/** the default grace between SIGTERM and SIGKILL (GPUFLEET_PREEMPT_GRACE unset) */
const GRACE_S = 5;
/** prints when it starts and when SIGTERM arrives, and does not exit on it: only SIGKILL ends it */
const TRAPS_SIGTERM = `sh -c 'trap "echo got SIGTERM" TERM; echo started; while true; do sleep 0.1; done'`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let image: string;
let user: { accountId: string; key: string };

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `preempt-${process.pid}`, gpus: [FIXTURE_GPUS.RTX_4090], dockerFaults: true });
  cp = await startTestControlPlane({ background: [provisioner({ networkLingerMs: 0 })], reconcileIntervalMs: 300, metricsIntervalMs: 60_000 });
  hostId = await enrolTestHost(cp, host);
  user = await cp.newAccount('read_write');
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
});

const view = async (id: string) => (await (await cp.api(`/v2/pods/${id}`, { key: user.key })).json()) as Json;
async function create(json: Json): Promise<Json> {
  const res = await cp.api('/v2/pods', { method: 'POST', json: { image, args: TRAPS_SIGTERM, disk: 1, ...json }, key: user.key });
  const body = (await res.json()) as Json;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}
async function until(id: string, what: string, ok: (p: Json) => boolean, timeoutMs = 60_000): Promise<Json> {
  let last: Json = {};
  return waitFor(what, async () => {
    last = await view(id);
    return ok(last) ? last : null;
  }, timeoutMs, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}; pod ${id} reads ${last.status}: ${last.statusReason}`);
  });
}
const running = (id: string) => until(id, `${id} RUNNING`, (p) => p.status === 'RUNNING');

/** The container's log lines with docker's timestamps (ms since the epoch). */
async function timedLog(podId: string): Promise<{ at: number; line: string }[]> {
  const { stdout } = await runDocker(['logs', '--timestamps', `gpufleet-${podId}`]);
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [ts, ...rest] = l.split(' ');
      return { at: Date.parse(ts!), line: rest.join(' ') };
    });
}

/**
 * What the victim's container went through: it got SIGTERM (its log says when), went on running, and
 * was killed (137) `GRACE_S` later; answers when it finished. `after`: the moment the preemption was asked for.
 */
async function expectPreemptedContainer(podId: string, after: number): Promise<{ finishedAt: number; containerId: string }> {
  const c = await waitFor(`${podId}'s container stopped`, async () => {
    const i = await dockerInspect(`gpufleet-${podId}`);
    return i && !i.State.Running ? i : null;
  }, (GRACE_S + 30) * 1000);
  // this run of the container (a container started again keeps the earlier runs' lines before)
  const all = await timedLog(podId);
  const log = all.slice(all.map((l) => l.line).lastIndexOf('started'));
  expect(log.map((l) => l.line)).toEqual(['started', 'got SIGTERM']);
  const term = log[1]!.at;
  const finishedAt = Date.parse(c.State.FinishedAt);
  // SIGTERM first (after the preempting request), then SIGKILL once the grace ran out: exit code 137
  expect(term).toBeGreaterThanOrEqual(after - 50);
  expect(c.State.ExitCode).toBe(137);
  // the trap runs between two 0.1 s sleeps: SIGTERM reached it up to 0.1 s before it printed
  expect(finishedAt - term).toBeGreaterThanOrEqual(GRACE_S * 1000 - 300);
  expect(finishedAt - term).toBeLessThan(GRACE_S * 1000 + 3000);
  return { finishedAt, containerId: c.Id };
}

async function graphqlPod(podId: string): Promise<Json> {
  const r = await runpodctl(cp.url, { key: user.key }, `query { pod(input: {podId: "${podId}"}) { id desiredStatus podType bidPerGpu costPerHr } }`);
  expect(r.errors).toBeUndefined();
  return r.data.pod;
}

describe('preemption on a full host', () => {
  let spotId = '';
  let demandId = '';

  test('an on-demand create takes the spot pod\'s GPU: SIGTERM, SIGKILL after the grace, then the new container; RUNNING within grace + 15 s', async () => {
    const spot = await create({ name: 'spot', gpu: { id: RTX4090 }, interruptible: true, bidPerGpu: 0.4 });
    spotId = spot.id;
    await running(spotId);
    expect(await graphqlPod(spotId)).toMatchObject({ desiredStatus: 'RUNNING', podType: 'INTERRUPTABLE', bidPerGpu: 0.4, costPerHr: 0.4 });

    const asked = Date.now();
    const demand = await create({ name: 'demand', gpu: { id: RTX4090 } });
    demandId = demand.id;
    expect(demand).toMatchObject({ machineId: hostId, interruptible: false });
    const ran = await running(demandId);
    const runningAfterMs = Date.now() - asked;
    expect(runningAfterMs).toBeLessThan((GRACE_S + 15) * 1000);

    const victim = await expectPreemptedContainer(spotId, asked);
    // never one GPU in two containers: the new container started after the victim's ended
    const started = Date.parse((await dockerInspect(`gpufleet-${demandId}`))!.State.StartedAt);
    expect(started).toBeGreaterThanOrEqual(victim.finishedAt);
    expect(ran.startedAt).toBeTruthy();

    const v = await until(spotId, 'the victim stopped', (p) => p.status === 'EXITED' && /GPUs released/.test(p.statusReason));
    expect(v).toMatchObject({ desiredStatus: 'EXITED', interruptible: true, cost: 0 });
    expect(v.statusReason).toMatch(/^preempted: an on-demand pod needed its GPUs; the container gets SIGTERM, then SIGKILL after 5 s; volume and disk are kept; container stopped, GPUs released$/);
    expect(v.conditions).toContainEqual(expect.objectContaining({ type: 'ContainerRunning', reason: 'Preempted' }));
    // what third-party eviction detectors read
    expect(await graphqlPod(spotId)).toMatchObject({ desiredStatus: 'EXITED', podType: 'INTERRUPTABLE' });
    const events = ((await (await cp.api(`/v2/events?resourceId=${spotId}`, { key: user.key })).json()) as Json).events as Json[];
    expect(events.map((e) => e.type)).toContain('pod.preempted');
    // its container (the disk) is kept, stopped
    expect(await dockerInspect(`gpufleet-${spotId}`)).toMatchObject({ Id: victim.containerId });
    process.stdout.write(`on-demand RUNNING ${runningAfterMs} ms after its create (grace ${GRACE_S} s)\n`);
  }, 120_000);

  test('a higher bid preempts a lower one; podBidResume outbids it back into the same container', async () => {
    await cp.api(`/v2/pods/${demandId}`, { method: 'DELETE', key: user.key });
    await waitFor('the on-demand container gone', async () => (await dockerInspect(`gpufleet-${demandId}`)) === null, 30_000);
    const high = await create({ name: 'high', gpu: { id: RTX4090 }, interruptible: true, bidPerGpu: 0.5 });
    await running(high.id);

    // runpodctl's StartSpotPod (its verbatim text): the preempted 0.4 pod comes back at 0.6, over the 0.5 one
    const oldContainer = (await dockerInspect(`gpufleet-${spotId}`))!.Id;
    const asked = Date.now();
    const r = await runpodctl(cp.url, { key: user.key }, BID_RESUME_POD, { podId: spotId, bidPerGpu: 0.6, gpuCount: 1 });
    expect(r.errors).toBeUndefined();
    expect(r.data.podBidResume).toMatchObject({ id: spotId, desiredStatus: 'RUNNING', costPerHr: 0.6 });
    await running(spotId);
    expect(Date.now() - asked).toBeLessThan((GRACE_S + 15) * 1000);
    const victim = await expectPreemptedContainer(high.id, asked);
    const again = await dockerInspect(`gpufleet-${spotId}`);
    // the same container (its disk kept), started again after the higher bid's container ended
    expect(again!.Id).toBe(oldContainer);
    expect(Date.parse(again!.State.StartedAt)).toBeGreaterThanOrEqual(victim.finishedAt);
    const h = await until(high.id, 'the 0.5 bid stopped', (p) => p.status === 'EXITED' && /GPUs released/.test(p.statusReason));
    expect(h.statusReason).toMatch(/^preempted: a higher bid needed its GPUs/);
  }, 120_000);

  test("the victim's docker stop fails twice: the on-demand pod waits, never running beside it, and starts after the retried stop", async () => {
    // the GPU is held by the 0.6 bid (the last test's pod); nothing else runs
    const faults = host.dockerFaults!;
    const stopsBefore = (await faults.calls('stop')).length;
    await faults.failNext('stop', 2);
    const asked = Date.now();
    const demand = await create({ name: 'demand-2', gpu: { id: RTX4090 } });
    // while the stops fail the new pod says what it waits for, and has no container
    await until(demand.id, 'the new pod waiting for the GPU', (p) => p.statusReason === 'waiting for its GPUs to be released by a container that is stopping');
    expect(await dockerInspect(`gpufleet-${demand.id}`)).toBeNull();
    expect((await dockerInspect(`gpufleet-${spotId}`))!.State.Running).toBe(true);
    const stops = await faults.waitCalls('stop', stopsBefore + 3, 30_000);
    await running(demand.id);
    const victim = await expectPreemptedContainer(spotId, asked);
    // SIGTERM came with the third stop (the first two failed on the host before docker was asked)
    expect(victim.finishedAt).toBeGreaterThanOrEqual(stops[stopsBefore + 2]!);
    expect(Date.parse((await dockerInspect(`gpufleet-${demand.id}`))!.State.StartedAt)).toBeGreaterThanOrEqual(victim.finishedAt);
    // the retries' wording gave way to the preemption's once the stop went through
    const v = await until(spotId, 'the victim stopped', (p) => /GPUs released$/.test(p.statusReason));
    expect(v.statusReason).toMatch(/^preempted: an on-demand pod needed its GPUs/);
    expect(v.conditions).toContainEqual(expect.objectContaining({ type: 'ContainerRunning', reason: 'Preempted' }));
  }, 120_000);
});
