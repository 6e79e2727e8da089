// Interruptible pods through GraphQL as the public clients send it (docs/teams.md): SkyPilot's
// podRentInterruptable text (skypilot-texts.ts), runpodctl's podResume and podBidResume texts
// (runpodctl-texts.ts), and runpod-python's own get_gpu for the prices (it has no spot call). One
// fleet whose only H100s are one host of two, so its prices move with what runs there: the spot
// floor while a GPU is free, then just above the bids a new one would preempt; a bid at that price
// places and a bid below it is refused with the public platform's words.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { python, runpodctl, type Auth } from './gql-client.ts';
import { RunpodPython } from './runpod-python-client.ts';
import { skypilotSpotPod } from './skypilot-texts.ts';
import * as ctl from './runpodctl-texts.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const NO_INSTANCES = 'There are no instances available with the request specifications. Please try again later.';
/** H100 SECURE 2.99 on demand; its spot floor is half */
const FLOOR = 1.495;

let cp: TestControlPlane;
let auth: Auth;
let py: RunpodPython;

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ id: 'spot-full', gpus: 2, dataCenterId: 'dc-spot' }]);
  const acct = await cp.newAccount('read_write');
  auth = { key: acct.key };
  py = await RunpodPython.start(cp.url, acct.key);
});
afterAll(async () => {
  await py?.close();
  await cp?.close();
});

/** SkyPilot's create, as runpod-python's run_graphql_query posts it */
const sky = (name: string, bid: number) => python(cp.url, auth, skypilotSpotPod(name, bid));
const pod = async (podId: string) =>
  (await runpodctl(cp.url, auth, `query { pod(input: {podId: "${podId}"}) { id desiredStatus podType bidPerGpu costPerHr lastStatusChange } }`)).data.pod;
/** runpod-python's get_gpu(id, count): the prices it reads */
const prices = async (count: number) => {
  const g = await py.call('get_gpu', [H100, count]);
  return { secureSpotPrice: g.secureSpotPrice, communitySpotPrice: g.communitySpotPrice, ...g.lowestPrice };
};

describe('spot pods over GraphQL', () => {
  const ids: Record<string, string> = {};

  test('runpod-python get_gpu: spot prices are the floor of the tier the fleet has, and GPUs free bid at the floor', async () => {
    expect(await prices(1)).toEqual({ secureSpotPrice: FLOOR, communitySpotPrice: null, minimumBidPrice: FLOOR, uninterruptablePrice: 2.99 });
    expect((await prices(2)).minimumBidPrice).toBe(FLOOR);
  });

  test("SkyPilot's podRentInterruptable creates spot pods: podType INTERRUPTABLE, billed at the bid", async () => {
    for (const [name, bid] of [['low', 1.6], ['high', 1.8]] as const) {
      const r = await sky(name, bid);
      expect(r.errors).toBeUndefined();
      expect(r.data.podRentInterruptable).toMatchObject({ desiredStatus: 'RUNNING', imageName: 'busybox:1.36', env: ['K=V'], machineId: 'spot-full', machine: { podHostId: expect.stringContaining('spot-full') } });
      ids[name] = r.data.podRentInterruptable.id;
      expect(await pod(ids[name]!)).toMatchObject({ podType: 'INTERRUPTABLE', bidPerGpu: bid, costPerHr: bid });
    }
    const rest = (await (await cp.api(`/v2/pods/${ids.low}`, { key: auth.key })).json()) as { interruptible: boolean; bidPerGpu: number; disk: number; ports: string[] };
    expect(rest).toMatchObject({ interruptible: true, bidPerGpu: 1.6, disk: 10, ports: ['22/tcp'] });
  });

  test('the host full: minimumBidPrice is just above the bids a new pod would preempt; a bid below is refused, one at it places', async () => {
    expect(await prices(1)).toMatchObject({ minimumBidPrice: 1.61 });
    expect(await prices(2)).toMatchObject({ minimumBidPrice: 1.81 });
    const below = await sky('below', 1.6);
    expect(below.errors?.[0]).toMatchObject({ message: NO_INSTANCES, extensions: { code: 'CAPACITY_UNAVAILABLE' } });
    expect((await pod(ids.low!)).desiredStatus).toBe('RUNNING');
    const at = await sky('at', 1.61);
    expect(at.errors).toBeUndefined();
    ids.at = at.data.podRentInterruptable.id;
    // the lowest bid gave its GPU back: EXITED, INTERRUPTABLE, what eviction detectors read
    expect(await pod(ids.low!)).toMatchObject({ desiredStatus: 'EXITED', podType: 'INTERRUPTABLE', costPerHr: 0, lastStatusChange: expect.stringContaining('preempted') });
    expect((await pod(ids.high!)).desiredStatus).toBe('RUNNING');
    expect(await prices(1)).toMatchObject({ minimumBidPrice: 1.62 });
  });

  test("runpodctl's podResume on a spot pod answers the public platform's error", async () => {
    const r = await runpodctl(cp.url, auth, ctl.RESUME_POD, { podId: ids.low });
    expect(r.errors?.[0]).toMatchObject({ message: 'Cannot resume a spot pod as an on demand pod.', extensions: { code: 'BAD_REQUEST' } });
    expect((await pod(ids.low!)).desiredStatus).toBe('EXITED');
  });

  test("runpodctl's podBidResume: below the minimum bid refused, at it the pod runs again at its new bid, preempting the lowest", async () => {
    const low = await runpodctl(cp.url, auth, ctl.BID_RESUME_POD, { podId: ids.low, bidPerGpu: 1.0, gpuCount: 1 });
    expect(low.errors?.[0]).toMatchObject({ message: NO_INSTANCES });
    const wrongCount = await runpodctl(cp.url, auth, ctl.BID_RESUME_POD, { podId: ids.low, bidPerGpu: 1.62, gpuCount: 2 });
    expect(wrongCount.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    const bid = (await prices(1)).minimumBidPrice as number;
    const r = await runpodctl(cp.url, auth, ctl.BID_RESUME_POD, { podId: ids.low, bidPerGpu: bid, gpuCount: 1 });
    expect(r.errors).toBeUndefined();
    expect(r.data.podBidResume).toMatchObject({ id: ids.low, desiredStatus: 'RUNNING', costPerHr: bid });
    expect(await pod(ids.low!)).toMatchObject({ podType: 'INTERRUPTABLE', bidPerGpu: bid });
    expect((await pod(ids.at!)).desiredStatus).toBe('EXITED');
  });

  test('a spot create names a bid (the input requires it), of the create\'s own rule', async () => {
    const missing = await runpodctl(cp.url, auth, 'mutation { podRentInterruptable(input: {name: "x", imageName: "busybox:1.36", gpuTypeId: "NVIDIA H100 80GB HBM3"}) { id } }');
    expect(missing.errors?.[0]?.message).toMatch(/bidPerGpu/);
    const zero = await sky('zero', 0);
    expect(zero.errors?.[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED', errors: ['$.bidPerGpu: must be > 0'] } });
  });
});
