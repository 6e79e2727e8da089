// The autoscaler on a load-balancing endpoint (docs/gateway.md, "Scaling"): its demand is HTTP requests
// as the gateway reports them (RequestTraffic): held requests scale from zero, REQUEST_COUNT counts
// requests in flight, and a worker serving a request is never stopped as idle. The worker side alone,
// with a clock the test moves (test/core/workers/worker-fixture.ts).
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openWorkerFixture, type WorkerFixture } from '../core/workers/worker-fixture.ts';

let f: WorkerFixture;
beforeEach(async () => {
  f = await openWorkerFixture({ hosts: [{ id: 'host-a', gpus: 8 }] });
});
afterEach(async () => f.close());

const ready = async (endpointId: string) => {
  for (const w of await f.live(endpointId)) {
    await f.markRunning(w.id);
    await f.workers.seen(w.id, { healthy: true, inProgress: f.workers.requests.serving(w.id) });
  }
};

test('held requests scale from zero; REQUEST_COUNT is ceil((held + in flight) / scalerValue)', async () => {
  const e = await f.endpoint({ type: 'LOAD_BALANCER', scalerType: 'REQUEST_COUNT', scalerValue: 2, workersMin: 0, workersMax: 5, idleTimeout: 5 });
  await f.scaler.tick();
  expect(await f.live(e.id)).toHaveLength(0);
  const holds = [f.workers.requests.hold(e.id), f.workers.requests.hold(e.id), f.workers.requests.hold(e.id)];
  expect(f.workers.requests.depth(e.id)).toMatchObject({ inQueue: 3, inProgress: 0 });
  await f.scaler.tick();
  expect(await f.live(e.id)).toHaveLength(2); // ceil(3 / 2)
  for (const h of holds) h();
  await ready(e.id);
  const [a, b] = await f.live(e.id);
  // five requests in flight on the two: ceil(5 / 2) = 3 wanted
  const ends = [...Array(3)].map(() => f.workers.requests.start(e.id, a!.id)).concat([...Array(2)].map(() => f.workers.requests.start(e.id, b!.id)));
  await f.scaler.tick();
  expect(await f.live(e.id)).toHaveLength(3);
  for (const end of ends) end();
  expect(f.workers.requests.depth(e.id)).toMatchObject({ inQueue: 0, inProgress: 0 });
});

test('a worker with a request in flight is RUNNING and is not stopped as idle; the idle one is', async () => {
  const e = await f.endpoint({ type: 'LOAD_BALANCER', scalerType: 'REQUEST_COUNT', scalerValue: 4, workersMin: 0, workersMax: 2, idleTimeout: 5 });
  const holds = [...Array(5)].map(() => f.workers.requests.hold(e.id));
  await f.scaler.tick();
  for (const h of holds) h();
  await ready(e.id);
  const [a, b] = await f.live(e.id);
  expect(b).toBeDefined();
  const end = f.workers.requests.start(e.id, a!.id);
  expect((await f.workers.counts(e.id))).toMatchObject({ running: 1, idle: 1 });
  f.advance(10_000); // past idleTimeout for both, by the clock
  await f.workers.seen(a!.id, { healthy: true, inProgress: f.workers.requests.serving(a!.id) });
  await f.workers.seen(b!.id, { healthy: true, inProgress: [] });
  await f.scaler.tick();
  expect((await f.live(e.id)).map((w) => w.id)).toEqual([a!.id]);
  // done: now it too goes once idle past the timeout
  end();
  f.advance(6_000);
  await f.workers.seen(a!.id, { healthy: true, inProgress: [] });
  await f.scaler.tick();
  expect(await f.live(e.id)).toHaveLength(0);
});

test('a worker whose health check stops answering 200 is UNHEALTHY with the reason, and is retired after the silence allowance', async () => {
  const e = await f.endpoint({ type: 'LOAD_BALANCER', workersMin: 1, workersMax: 1 });
  await f.scaler.tick();
  await ready(e.id);
  const [w] = await f.live(e.id);
  f.workers.liveness.checked(w!.id, false, 'GET /ping on port 80 answered 503: out of rotation');
  const [view] = await f.workers.views(e);
  expect(view).toMatchObject({ status: 'UNHEALTHY', statusReason: 'GET /ping on port 80 answered 503: out of rotation' });
  f.advance(61_000);
  await f.scaler.tick();
  const retired = (await f.all(e.id)).find((p) => p.id === w!.id)!;
  expect(retired.worker.retiredReason).toMatch(/^out of rotation for 61 s: GET \/ping on port 80 answered 503/);
  expect(retired.worker.failed).toBe(true);
});
