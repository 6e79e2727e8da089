// Interruptible pods over REST v2 (docs/teams.md "Interruptible pods"), against a listening control
// plane with record-only hosts (no provisioner: the records are what is checked here; the containers,
// signals and timing are test/fleet/preemption-e2e.test.ts's): the create's fields and rules, billing
// at the bid, the spot floor, and preemption in the create's plan: lowest bid first, a higher bid over
// a lower one, an on-demand pod over any, the victim EXITED with its reason, condition and event.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { call, expectPodView, expectProblem, H100, snapshotPods, startPodsControlPlane, uniqueName } from './pods-helpers.ts';

/** the public platform's words for a spot request that places nowhere (runpodctl PR #267) */
const NO_INSTANCES = 'There are no instances available with the request specifications. Please try again later.';
/** H100 SECURE on-demand 2.99 (built-in prices): its spot floor is half */
const FLOOR = 1.495;
/** one host of 2 H100s in a data center of its own: full with two 1-GPU pods */
const SPOT_DC = 'dc-spot';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let other: { accountId: string; key: string };

beforeAll(async () => {
  cp = await startPodsControlPlane();
  await seedHosts(cp.services.store, [{ id: 'spot-full', gpus: 2, dataCenterId: SPOT_DC }]);
  user = await cp.newAccount('read_write');
  other = await cp.newAccount('read_write');
});
afterAll(async () => cp?.close());

const post = (json: Record<string, unknown>, key = user.key) => call(cp, '/v2/pods', { method: 'POST', json, key });
const get = async (id: string, key = user.key) => (await call(cp, `/v2/pods/${id}`, { key })).body;
const spot = (extra: Record<string, unknown> = {}) => ({ name: uniqueName('spot'), image: 'busybox:1.36', gpu: { id: H100, count: 1 }, disk: 5, interruptible: true, ...extra });

describe('the create', () => {
  test('interruptible: true without a bid bids the spot floor and costs it per GPU; the view shows both', async () => {
    const c = await post(spot({ gpu: { id: H100, count: 2 } }));
    expect(c.status, c.text).toBe(201);
    expectPodView(c.body);
    expect(c.body).toMatchObject({ interruptible: true, bidPerGpu: FLOOR, cost: 2 * FLOOR, cloud: 'SECURE' });
    const onDemand = await post({ name: uniqueName('od'), image: 'busybox:1.36', gpu: { id: H100 }, disk: 5 });
    expect(onDemand.body).toMatchObject({ interruptible: false, bidPerGpu: null, cost: 2.99 });
    expectPodView(onDemand.body);
  });

  test('a bid of its own is billed: the pod costs bid × GPUs and the billing record runs at that rate', async () => {
    const c = await post(spot({ bidPerGpu: 2.25, gpu: { id: H100, count: 2 } }));
    expect(c.body).toMatchObject({ interruptible: true, bidPerGpu: 2.25, cost: 4.5 });
    const open = await cp.services.store.list('billing', { resourceId: c.body.id, endedAt: null });
    expect(open.map((r) => r.rate)).toEqual([4.5]);
  });

  test('field rules: a bid needs interruptible, interruptible needs GPUs, a bid is > 0; nothing is created', async () => {
    const before = await snapshotPods(cp, user.key);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...spot(), interruptible: false, bidPerGpu: 2 }, '$.bidPerGpu: only with interruptible: true'],
      [{ name: uniqueName('cpu'), image: 'busybox:1.36', cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, interruptible: true }, '$.interruptible: only GPU pods can be interruptible (give gpu)'],
      [spot({ bidPerGpu: 0 }), '$.bidPerGpu: must be > 0'],
      [spot({ bidPerGpu: 'high' }), '$.bidPerGpu: must be number'],
    ];
    for (const [body, line] of cases) {
      const c = await post(body);
      expectProblem(c, 422, { code: 'VALIDATION_FAILED' });
      expect(c.body.errors).toContain(line);
    }
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('a bid below the spot floor is refused with the public platform\'s words, and changes nothing', async () => {
    const before = await snapshotPods(cp, user.key);
    const c = await post(spot({ bidPerGpu: FLOOR - 0.01 }));
    expectProblem(c, 400, { code: 'CAPACITY_UNAVAILABLE' });
    expect(c.body.detail).toBe(NO_INSTANCES);
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });
});

describe('preemption on a full host', () => {
  const inSpotDc = (extra: Record<string, unknown> = {}) => spot({ dataCenterIds: [SPOT_DC], ...extra });
  let a: string;
  let b: string;

  test('two bids fill the host; a third bid no higher than the lowest is refused, nothing preempted', async () => {
    a = (await post(inSpotDc({ bidPerGpu: 1.6 }))).body.id;
    b = (await post(inSpotDc({ bidPerGpu: 1.8 }), other.key)).body.id;
    expect((await get(a)).machineId).toBe('spot-full');
    expect((await get(b, other.key)).machineId).toBe('spot-full');
    const equal = await post(inSpotDc({ bidPerGpu: 1.6 }));
    expectProblem(equal, 400, { code: 'CAPACITY_UNAVAILABLE' });
    expect(equal.body.detail).toBe(NO_INSTANCES);
    expect((await get(a)).status).toBe('PROVISIONING');
  });

  test('a higher bid takes the lowest bid\'s GPU: that pod is EXITED, preempted, with its condition, event and billing closed', async () => {
    const c = await post(inSpotDc({ bidPerGpu: 1.61 }));
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ machineId: 'spot-full', bidPerGpu: 1.61 });
    const victim = await get(a);
    expectPodView(victim);
    expect(victim).toMatchObject({ status: 'EXITED', desiredStatus: 'EXITED', interruptible: true, cost: 0, machineId: 'spot-full' });
    expect(victim.statusReason).toMatch(/^preempted: a higher bid needed its GPUs; the container gets SIGTERM, then SIGKILL after 5 s; volume and disk are kept/);
    expect(victim.conditions).toContainEqual(expect.objectContaining({ type: 'ContainerRunning', status: 'False', reason: 'Preempted' }));
    expect(victim.conditions).toContainEqual(expect.objectContaining({ type: 'Scheduled', status: 'False', reason: 'Released' }));
    const events = (await call(cp, `/v2/events?resourceId=${a}`, { key: user.key })).body.events;
    expect(events.at(-1)).toMatchObject({ type: 'pod.preempted', status: 'EXITED', reason: victim.statusReason });
    expect(await cp.services.store.list('billing', { resourceId: a, endedAt: null })).toEqual([]);
    // the other account's higher bid was not touched
    expect((await get(b, other.key)).status).toBe('PROVISIONING');
  });

  test('an on-demand create on the full host never fails for interruptible pods: it takes the lowest bid left', async () => {
    const spots = (await cp.services.store.list('pods', { hostId: 'spot-full' })).filter((p) => p.allocated);
    const lowest = spots.sort((x, y) => (x.bidPerGpu ?? 0) - (y.bidPerGpu ?? 0))[0]!;
    expect(lowest.bidPerGpu).toBe(1.61);
    const c = await post({ name: uniqueName('od'), image: 'busybox:1.36', gpu: { id: H100 }, disk: 5, dataCenterIds: [SPOT_DC] });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ machineId: 'spot-full', interruptible: false, cost: 2.99 });
    const victim = await get(lowest.id);
    expect(victim.statusReason).toMatch(/^preempted: an on-demand pod needed its GPUs/);
    // the GPU went from the victim to the new pod, never to two pods at once
    const held = (await cp.services.store.list('pods', { hostId: 'spot-full' })).filter((p) => p.allocated).flatMap((p) => p.gpuUuids);
    expect(held.sort()).toEqual(['GPU-spot-full-0', 'GPU-spot-full-1']);
  });

  test('a preempted pod started again over REST bids what it bid before: refused while only higher bids and on-demand pods hold the host', async () => {
    // the host holds the 1.8 bid and the on-demand pod: nothing frees for a start at 1.6
    const again = await call(cp, `/v2/pods/${a}/action`, { method: 'POST', key: user.key, json: { action: 'start' } });
    expectProblem(again, 400, { code: 'CAPACITY_UNAVAILABLE' });
    expect(again.body.detail).toBe(NO_INSTANCES);
    expect((await get(a)).status).toBe('EXITED');
  });
});

describe('a dry run on a host full of interruptible pods', () => {
  test('an on-demand dry run answers 200 with the host and how many it would preempt, and preempts none: the victim keeps its GPU, no event, billing open', async () => {
    const DRY_DC = 'dc-dry-spot';
    await seedHosts(cp.services.store, [{ id: 'dry-full', gpus: 1, dataCenterId: DRY_DC }]);
    const victim = await post(spot({ dataCenterIds: [DRY_DC] }), other.key);
    expect(victim.status, victim.text).toBe(201);
    expect(victim.body.machineId).toBe('dry-full');
    const body = { name: uniqueName('od'), image: 'busybox:1.36', gpu: { id: H100 }, disk: 5, dataCenterIds: [DRY_DC] };
    const d = await call(cp, '/v2/pods?dryRun=true', { method: 'POST', json: body, key: user.key });
    expect(d.status, d.text).toBe(200);
    expect(d.body).toMatchObject({ dryRun: true, machineId: 'dry-full', costPerHr: 2.99, wouldPreempt: 1 });
    const after = await cp.services.store.get('pods', victim.body.id);
    expect(after).toMatchObject({ allocated: true, hostId: 'dry-full', gpuUuids: ['GPU-dry-full-0'], status: 'PROVISIONING', desiredStatus: 'RUNNING' });
    expect(after?.preemption ?? null).toBeNull();
    const events = (await call(cp, `/v2/events?resourceId=${victim.body.id}`, { key: other.key })).body.events as { type: string }[];
    expect(events.map((e) => e.type)).not.toContain('pod.preempted');
    expect((await cp.services.store.list('billing', { resourceId: victim.body.id, endedAt: null })).length).toBe(1);
  });
});
