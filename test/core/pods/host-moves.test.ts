// Pods leaving their hosts, keeping their ids (docs/gpu-health.md, "Acting on it"), on two real sshd test hosts with
// fixture GPUs (one H100 type, two GPUs each, one data center), the real Docker engine and the
// provisioner. A drain without a deadline moves nothing; a drain with one moves the pod to the other
// host, RUNNING there with the same id, the old container removed, `pod.moved` in its owner's events
// and no charge between the stop and RUNNING again; a bad deadline is 400 and changes nothing; a
// cancelled drain stops moving. A lost host (its sshd killed) has its movable pod running on the other
// host while the old copy still runs there (a partition), its persistent-volume pod EXITED with the
// reason; when sshd returns the stale container is removed in the host's first pass, before the
// container of a pod started there again is created. A network-volume pod on a lost host stays there
// until an operator confirms the host gone (POST /v2/hosts/{id}/lost), then moves. An Xid 79 line in a host's fixture kernel log
// (the GPU watcher follows it) moves the pod on that GPU to the other host within 60 s, and stops the
// persistent-volume pod on the other failed GPU with the reason.
// Under GPUFLEET_TEST_STORE=postgres: two control planes on one database, and only one acts (each
// pod moves once: one pod.moved event, two billing records).
// Test hosts share one Docker engine: each gets container names of its own (testing/docker-own-names.ts),
// as each real host's engine has.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { enrolTestHost, ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, removeNetworksByLabel, startTestHost, type TestHost } from '../../harness/index.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from '../../harness/test-store.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { provisioner } from '../../../provisioner/index.ts';
import type { BillingRecord } from '../../../model/index.ts';

type Json = Record<string, any>;
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const GPU = 'NVIDIA H100 80GB HBM3';
/** a host unreachable this long is lost (GPUFLEET_HOST_LOST_AFTER) */
const LOST_AFTER_MS = 3000;

const cps: TestControlPlane[] = [];
let cp: TestControlPlane;
let a: TestHost;
let b: TestHost;
let hostA = '';
let hostB = '';
let image = '';
let owner: { accountId: string; key: string };

beforeAll(async () => {
  image = await ensureTestImage();
  [a, b] = await Promise.all([
    startTestHost({ name: `moves-a-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3], ownContainerNames: true }),
    startTestHost({ name: `moves-b-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3], ownContainerNames: true }),
  ]);
  // postgres: two replicas on one database, started one after the other (the first migrates it)
  const database = TEST_STORE === 'postgres' ? { databaseUrl: await freshTestDatabase(), secretKey: TEST_SECRET_KEY } : {};
  for (let i = 0; i < (TEST_STORE === 'postgres' ? 2 : 1); i++)
    cps.push(
      await startTestControlPlane({
        background: [provisioner({ networkLingerMs: 0 })],
        reconcileIntervalMs: 300,
        metricsIntervalMs: 60_000,
        config: { ...database, hostLostAfterMs: LOST_AFTER_MS, gpuPollSeconds: 1 },
      }),
    );
  cp = cps[0]!;
  hostA = await enrolTestHost(cp, a);
  hostB = await enrolTestHost(cp, b);
  owner = await cp.newAccount('read_write', 1000);
}, 180_000);

afterAll(async () => {
  for (const c of cps) await c.close().catch(() => undefined);
  for (const id of [hostA, hostB].filter(Boolean)) {
    await removeContainersByLabel(`gpufleet.host=${id}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${id}`).catch(() => undefined);
  }
  await Promise.all([a?.dispose(), b?.dispose()]);
});

// a test that failed half-way leaves no host drained (or stopped) for the next
afterEach(async () => {
  if (!a?.running) await a?.start();
  for (const id of [hostA, hostB].filter(Boolean)) await drain(id, { drained: false });
});

const api = (path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) => cp.api(path, init);
const pod = async (id: string) => (await (await api(`/v2/pods/${id}`, { key: owner.key })).json()) as Json;
const hostView = async (id: string) => (await (await api(`/v2/hosts/${id}`)).json()) as Json;
const drain = (id: string, body: Json) => api(`/v2/hosts/${id}/drain`, { method: 'POST', json: body });
const cond = (view: Json, type: string) => (view.conditions as Json[]).find((c) => c.type === type);

async function podWhere(id: string, what: string, ok: (p: Json) => boolean, timeoutMs = 60_000): Promise<Json> {
  let last: Json = {};
  return waitFor(what, async () => {
    last = await pod(id);
    return ok(last) ? last : null;
  }, timeoutMs, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}; the pod reads ${last.status} on ${last.machineId}: ${last.statusReason}`);
  });
}

/** Creates the pod on `hostId`: the other host is cordoned meanwhile. */
async function createOn(hostId: string, name: string, over: Json = {}): Promise<string> {
  const other = hostId === hostA ? hostB : hostA;
  expect((await drain(other, { drained: true })).status).toBe(200);
  try {
    const res = await api('/v2/pods', { method: 'POST', key: owner.key, json: { name, image, args: SLEEPER, disk: 1, gpu: { id: GPU, count: 1 }, ...over } });
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.machineId).toBe(hostId);
    return body.id as string;
  } finally {
    expect((await drain(other, { drained: false })).status).toBe(200);
  }
}

/** the pod's containers on the engine, by the host their labels name */
async function containersOf(podId: string): Promise<{ host: string; running: boolean; id: string; created: string }[]> {
  return (await listContainers(`gpufleet.pod=${podId}`)).map((c) => ({
    host: (c as any).Config.Labels['gpufleet.host'] as string,
    running: c.State.Running,
    id: (c as any).Id as string,
    created: (c as any).Created as string,
  }));
}

/** a pod that can move and one with a persistent volume, both RUNNING on host A */
async function moverAndPinnedOnA(prefix: string): Promise<{ mover: string; pinned: string }> {
  const mover = await createOn(hostA, `${prefix}-mover`);
  const pinned = await createOn(hostA, `${prefix}-pinned`, { mounts: { persistent: { size: 10, path: '/data' } } });
  await podWhere(mover, 'mover RUNNING on A', (p) => p.status === 'RUNNING');
  await podWhere(pinned, 'pinned RUNNING on A', (p) => p.status === 'RUNNING');
  return { mover, pinned };
}

async function terminate(...ids: string[]): Promise<void> {
  for (const id of ids) await api(`/v2/pods/${id}`, { method: 'DELETE', key: owner.key });
}

async function billingOf(podId: string): Promise<BillingRecord[]> {
  return (await cp.services.store.list('billing', { resourceId: podId })).sort((x, y) => (x.startedAt < y.startedAt ? -1 : 1));
}

/** pod.moved events of the pod on every replica (each hears every commit) */
async function movedEvents(podId: string): Promise<Json[][]> {
  return Promise.all(
    cps.map(async (c) => ((await (await c.api(`/v2/events?resourceId=${podId}`, { key: owner.key })).json()) as { events: Json[] }).events.filter((e) => e.type === 'pod.moved')),
  );
}

describe('drains', () => {
  test('a drain without a deadline is a cordon: the pod stays where it runs', async () => {
    const id = await createOn(hostA, 'cordon-stays');
    const running = await podWhere(id, 'RUNNING on A', (p) => p.status === 'RUNNING');
    const [before] = await containersOf(id);
    const res = await drain(hostA, { drained: true });
    expect(res.status).toBe(200);
    const view = (await res.json()) as Json;
    expect(view).toMatchObject({ drained: true, status: 'DRAINING', drain: null });
    // several passes (300 ms each)
    await new Promise((r) => setTimeout(r, 3000));
    const after = await pod(id);
    expect(after).toMatchObject({ status: 'RUNNING', machineId: hostA, startedAt: running.startedAt });
    expect(await containersOf(id)).toEqual([before]);
    expect((await hostView(hostA)).drain).toBeNull();
    await drain(hostA, { drained: false });
    await terminate(id);
  }, 90_000);

  test('a deadline that is not a duration is 400 problem+json and changes nothing', async () => {
    for (const deadline of ['10 minutes', '-5m', '1d', 0, -3, '', '5m;reboot', '1e3', '99999999h', true]) {
      const res = await drain(hostA, { drained: true, deadline });
      const body = (await res.json()) as Json;
      expect(res.status, `${JSON.stringify(deadline)}: ${JSON.stringify(body)}`).toBe(typeof deadline === 'boolean' ? 422 : 400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    const cancelWithDeadline = await drain(hostA, { drained: false, deadline: '5m' });
    expect(cancelWithDeadline.status).toBe(400);
    expect(((await cancelWithDeadline.json()) as Json).code).toBe('BAD_REQUEST');
    expect(await hostView(hostA)).toMatchObject({ drained: false, status: 'READY', drain: null });
  });

  test('a drain with a deadline moves the pod to the other host: same id, RUNNING, old container removed, pod.moved, the gap unbilled', async () => {
    const id = await createOn(hostA, 'drain-moves');
    const first = await podWhere(id, 'RUNNING on A', (p) => p.status === 'RUNNING');
    const res = await drain(hostA, { drained: true, deadline: '10m' });
    expect(res.status).toBe(200);
    const started = (await res.json()) as Json;
    expect(started.drain).toMatchObject({ total: 1, moved: 0, stopped: 0, remaining: 1, finishedAt: null });
    expect(Date.parse(started.drain.deadline) - Date.parse(started.drain.startedAt)).toBe(600_000);
    expect(cond(started, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Draining' });

    const moved = await podWhere(id, 'RUNNING on B', (p) => p.status === 'RUNNING' && p.machineId === hostB);
    expect(moved.id).toBe(id);
    expect(cond(moved, 'Moved')).toMatchObject({ status: 'True', reason: 'HostDrained', message: `moved from host ${hostA} to host ${hostB}: host ${hostA} is drained with a deadline` });
    // the old copy is gone from A (removed, not only stopped); the one on B runs
    expect(await containersOf(id)).toEqual([expect.objectContaining({ host: hostB, running: true })]);

    const view = await waitFor('the drain finished', async () => {
      const v = await hostView(hostA);
      return v.drain?.finishedAt ? v : null;
    });
    expect(view.drain).toMatchObject({ total: 1, moved: 1, stopped: 0, moving: [], remaining: 0 });
    expect(cond(view, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Drained' });

    // the owner reads pod.moved naming both hosts; each replica recorded the move once
    for (const events of await movedEvents(id)) {
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ resourceId: id, reason: `moved from host ${hostA} to host ${hostB}: host ${hostA} is drained with a deadline` });
    }

    // billed on A until the move began, on B from RUNNING again; nothing between
    const stored = (await cp.services.store.get('pods', id))!;
    const records = await billingOf(id);
    expect(records).toHaveLength(2);
    const [onA, onB] = records as [BillingRecord, BillingRecord];
    expect(onA.endedAt).toBe(stored.move!.since);
    expect(onB.endedAt).toBeNull();
    // RUNNING again is written once the new container runs: after its start
    expect(Date.parse(onB.startedAt)).toBeGreaterThanOrEqual(Date.parse(moved.startedAt) - 1000);
    expect(Date.parse(onB.startedAt)).toBeGreaterThan(Date.parse(onA.endedAt!));
    expect(Date.parse(first.startedAt)).toBeLessThan(Date.parse(onA.endedAt!));
    expect(stored.move).toMatchObject({ cause: 'drain', fromHostId: hostA, toHostId: hostB, settled: true });

    await drain(hostA, { drained: false });
    await terminate(id);
  }, 120_000);

  test('{drained: false} cancels a drain in progress; a pod that cannot move stays until then', async () => {
    const id = await createOn(hostA, 'drain-cancel', { mounts: { persistent: { size: 10, path: '/data' } } });
    await podWhere(id, 'RUNNING on A', (p) => p.status === 'RUNNING');
    expect((await drain(hostA, { drained: true, deadline: 600 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await pod(id)).toMatchObject({ status: 'RUNNING', machineId: hostA });
    expect((await hostView(hostA)).drain).toMatchObject({ total: 1, moved: 0, remaining: 1, finishedAt: null });
    const cancelled = (await (await drain(hostA, { drained: false })).json()) as Json;
    expect(cancelled).toMatchObject({ drained: false, status: 'READY', drain: null });
    await terminate(id);
  }, 90_000);

  test('the deadline passes: a pod that could not move is stopped with the reason', async () => {
    const id = await createOn(hostA, 'drain-deadline', { mounts: { persistent: { size: 10, path: '/data' } } });
    await podWhere(id, 'RUNNING on A', (p) => p.status === 'RUNNING');
    expect((await drain(hostA, { drained: true, deadline: '3s' })).status).toBe(200);
    const stopped = await podWhere(id, 'EXITED at the deadline', (p) => p.status === 'EXITED');
    expect(stopped.statusReason).toContain(`the drain of host ${hostA} reached its deadline`);
    expect(cond(stopped, 'ContainerRunning')).toMatchObject({ reason: 'DrainDeadline' });
    await waitFor('its container stopped', async () => (await containersOf(id)).every((c) => !c.running));
    const view = await waitFor('the drain finished', async () => {
      const v = await hostView(hostA);
      return v.drain?.finishedAt ? v : null;
    });
    expect(view.drain).toMatchObject({ total: 1, moved: 0, stopped: 1, remaining: 0 });
    await drain(hostA, { drained: false });
    await terminate(id);
  }, 90_000);
});

describe('a lost host', () => {
  test("its movable pod runs on the other host (the old copy still runs); its persistent pod is EXITED; when it returns the stale container goes first", async () => {
    const { mover, pinned } = await moverAndPinnedOnA('lost');
    const [stale] = await containersOf(mover);

    const cutAt = Date.now();
    await a.stop();
    const moved = await podWhere(mover, 'mover RUNNING on B', (p) => p.status === 'RUNNING' && p.machineId === hostB, 90_000);
    expect(moved.id).toBe(mover);
    expect(cond(moved, 'Moved')).toMatchObject({ status: 'True', reason: 'HostLost' });
    // not before the host was away GPUFLEET_HOST_LOST_AFTER
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(LOST_AFTER_MS);
    const lostView = await hostView(hostA);
    expect(lostView).toMatchObject({ status: 'UNREACHABLE', lost: { confirmed: false } });
    expect(cond(lostView, 'Reachable')).toMatchObject({ status: 'False', reason: 'Lost' });
    // a partition: gpufleet cannot stop the old copy, which still runs on A
    expect(await containersOf(mover)).toEqual(expect.arrayContaining([expect.objectContaining({ host: hostA, running: true, id: stale!.id }), expect.objectContaining({ host: hostB, running: true })]));

    const exited = await podWhere(pinned, 'pinned EXITED', (p) => p.status === 'EXITED').catch(async (e: unknown) => {
      const v = await hostView(hostA);
      throw new Error(`${String(e)}; host A's GPUs: ${JSON.stringify(v.facts.gpus.map((g: Json) => [g.uuid, g.busId, g.health, g.incidents]))}; pinned holds ${JSON.stringify((await cp.services.store.get('pods', pinned))?.gpuUuids)}`);
    });
    expect(exited.machineId).toBe(hostA);
    expect(exited.statusReason).toContain(`its persistent volume is on host ${hostA}, so it cannot move`);
    expect(cond(exited, 'Moved')).toMatchObject({ status: 'False', reason: 'HostLost' });
    expect(exited.actions).toEqual(['start', 'terminate']);

    // the engine's own record of what happened to host A's containers from now on
    const events = followDockerEvents(hostA);
    try {
      await a.start();
      // the owner starts the pinned pod as soon as the host takes pods again: it goes back to A
      await waitFor('host A READY again', async () => (await hostView(hostA)).status === 'READY', 60_000, 50);
      const back = await api(`/v2/pods/${pinned}/action`, { method: 'POST', key: owner.key, json: { action: 'start' } });
      expect(back.status, await back.clone().text()).toBe(200);
      await waitFor('the stale container removed', async () => !(await containersOf(mover)).some((c) => c.host === hostA), 10_000, 50);
      await podWhere(pinned, 'pinned RUNNING on A again', (p) => p.status === 'RUNNING' && p.machineId === hostA);
      const seen = events.lines();
      const destroyed = seen.findIndex((e) => e.Action === 'destroy' && e.id === stale!.id);
      const startedAgain = seen.findIndex((e) => (e.Action === 'create' || e.Action === 'start') && e.Actor?.Attributes?.['gpufleet.pod'] === pinned);
      expect(destroyed, JSON.stringify(seen.map((e) => [e.Action, e.Actor?.Attributes?.['gpufleet.pod']]))).toBeGreaterThanOrEqual(0);
      expect(startedAgain).toBeGreaterThan(destroyed);
    } finally {
      events.stop();
    }
    expect(await pod(mover)).toMatchObject({ status: 'RUNNING', machineId: hostB });
    expect((await hostView(hostA)).lost).toBeNull();
    for (const evs of await movedEvents(mover)) expect(evs).toHaveLength(1);
    await terminate(mover, pinned);
  }, 180_000);
});

describe('a lost host with a network-volume pod', () => {
  test('the pod stays (unbilled, with the reason) until an operator confirms the host gone; then it runs on the other host', async () => {
    const vres = await api('/v2/network-volumes', { method: 'POST', key: owner.key, json: { name: 'moves-vol', size: 10, dataCenterId: 'dc-1' } });
    const vol = (await vres.json()) as Json;
    expect(vres.status, JSON.stringify(vol)).toBe(201);
    const id = await createOn(hostA, 'lost-volume', { mounts: { network: [{ volumeId: vol.id, path: '/workspace' }] } });
    await podWhere(id, 'RUNNING on A', (p) => p.status === 'RUNNING');
    // refused while the host answers: nothing to confirm
    const early = await api(`/v2/hosts/${hostA}/lost`, { method: 'POST' });
    expect(early.status).toBe(409);
    expect(((await early.json()) as Json).code).toBe('CONFLICT');

    await a.stop();
    try {
      await waitFor('A lost', async () => (await hostView(hostA)).lost !== null, 60_000);
      const held = await podWhere(id, 'held on A with the reason', (p) => /moves only once an operator confirms the host is gone/.test(p.statusReason ?? ''));
      expect(held).toMatchObject({ machineId: hostA, cost: 0 });
      expect(cond(held, 'Moved')).toMatchObject({ status: 'False', reason: 'HostLost' });
      // several passes later it is still there: two writers would corrupt the volume
      await new Promise((r) => setTimeout(r, 2000));
      expect((await pod(id)).machineId).toBe(hostA);
      const confirmed = await api(`/v2/hosts/${hostA}/lost`, { method: 'POST' });
      expect(confirmed.status).toBe(200);
      expect(((await confirmed.json()) as Json).lost).toMatchObject({ confirmed: true });
      const moved = await podWhere(id, 'RUNNING on B', (p) => p.status === 'RUNNING' && p.machineId === hostB, 60_000);
      expect(cond(moved, 'Moved')).toMatchObject({ status: 'True', reason: 'HostLost', message: expect.stringContaining('confirmed by an operator') });
    } finally {
      await a.start();
    }
    await waitFor('the stale copy removed from A', async () => !(await containersOf(id)).some((c) => c.host === hostA), 30_000);
    const records = await billingOf(id);
    // billed until A stopped answering, then from RUNNING on B; nothing while held
    expect(records).toHaveLength(2);
    await terminate(id);
    await api(`/v2/network-volumes/${vol.id}`, { method: 'DELETE', key: owner.key });
  }, 180_000);
});

// last: the GPUs it fails stay in FAILURE on host A
describe('a failed GPU', () => {
  test('an Xid 79 line on one GPU: its pod runs on the other host with its id within 60 s; the persistent-volume pod on the other GPU is EXITED with the reason', async () => {
    const { mover, pinned } = await moverAndPinnedOnA('xid');
    // the watcher has polled A: its GPUs' bus ids are known
    const gpus = (await waitFor('A watched', async () => {
      const g = (await hostView(hostA)).facts.gpus as Json[];
      return g.every((x) => x.busId) ? g : null;
    })) as Json[];
    const busOf = async (podId: string) => {
      const uuid = (await cp.services.store.get('pods', podId))!.gpuUuids[0];
      const [, bus, device] = /^[0-9A-Fa-f]+:([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\./.exec(gpus.find((g) => g.uuid === uuid)!.busId)!;
      return `PCI:0000:${bus}:${device}`;
    };
    const [moverBus, pinnedBus] = [await busOf(mover), await busOf(pinned)];
    expect(moverBus).not.toBe(pinnedBus);

    const written = Date.now();
    await a.gpu!.kernelLine(`NVRM: Xid (${moverBus}): 79, pid=1234, GPU has fallen off the bus.`);
    // the second line once the first is read: the fixture stamps lines with /proc/uptime (10 ms), and
    // two lines with one stamp read as one position in the log (reported to the watcher's author)
    await waitFor('the first GPU in FAILURE', async () => ((await hostView(hostA)).facts.gpus as Json[]).some((g) => g.health === 'FAILURE'), 15_000, 50);
    await a.gpu!.kernelLine(`NVRM: Xid (${pinnedBus}): 79, pid=1235, GPU has fallen off the bus.`);
    const moved = await podWhere(mover, 'mover RUNNING on B', (p) => p.status === 'RUNNING' && p.machineId === hostB, 60_000);
    const seconds = (Date.now() - written) / 1000;
    console.log(`Xid 79 line → pod RUNNING on the other host: ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(moved.id).toBe(mover);
    expect(cond(moved, 'Moved')).toMatchObject({ status: 'True', reason: 'GpuFailed' });
    expect(cond(moved, 'Moved')!.message).toMatch(new RegExp(`^moved from host ${hostA} to host ${hostB}: Xid 79 \\(GPU_HAS_FALLEN_OFF_THE_BUS\\) on GPU \\d \\(GPU-`));
    for (const evs of await movedEvents(mover)) {
      expect(evs).toHaveLength(1);
      expect(evs[0]!.reason).toContain(`moved from host ${hostA} to host ${hostB}: Xid 79`);
    }
    // the old container is removed from A, which answers
    await waitFor('the old copy removed', async () => (await containersOf(mover)).every((c) => c.host === hostB));
    // billed on A until the GPU failed (the incident's first sight), again from RUNNING on B
    const stored = (await cp.services.store.get('pods', mover))!;
    const [onA, onB] = (await billingOf(mover)) as [BillingRecord, BillingRecord];
    expect(onA.endedAt).toBe(stored.move!.since);
    expect(Date.parse(onB.startedAt)).toBeGreaterThanOrEqual(Date.parse(moved.startedAt) - 1000);

    const exited = await podWhere(pinned, 'pinned EXITED', (p) => p.status === 'EXITED').catch(async (e: unknown) => {
      const v = await hostView(hostA);
      throw new Error(`${String(e)}; host A's GPUs: ${JSON.stringify(v.facts.gpus.map((g: Json) => [g.uuid, g.busId, g.health, g.incidents]))}; pinned holds ${JSON.stringify((await cp.services.store.get('pods', pinned))?.gpuUuids)}`);
    });
    expect(exited.machineId).toBe(hostA);
    expect(exited.statusReason).toContain('Xid 79');
    expect(exited.statusReason).toContain(`its persistent volume is on host ${hostA}, so it cannot move`);
    expect(cond(exited, 'Moved')).toMatchObject({ status: 'False', reason: 'GpuFailed' });
    await waitFor('its container stopped', async () => (await containersOf(pinned)).every((c) => !c.running));
    await terminate(mover, pinned);
  }, 180_000);
});

/** `docker events` for containers labelled with the host, as the engine reports them, in order. */
function followDockerEvents(hostId: string): { lines(): Json[]; stop(): void } {
  const proc: ChildProcess = spawn('docker', ['events', '--filter', 'type=container', '--filter', `label=gpufleet.host=${hostId}`, '--format', '{{json .}}'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  proc.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  return {
    lines: () => text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json),
    stop: () => void proc.kill('SIGTERM'),
  };
}
