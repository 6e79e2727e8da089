// A worker that has called (job-take or ping) is IDLE or RUNNING, and its reason is no longer the
// host's report from before its container ran ("starting container"): the two used to show together.
// The worker side over a real store and queue (worker-fixture.ts), hosts as records.
import { afterEach, expect, test } from 'vitest';
import { openWorkerFixture, type WorkerFixture } from './worker-fixture.ts';

let fx: WorkerFixture;
afterEach(async () => fx?.close());

test('IDLE never shows with "starting container"; before the first call the state is INITIALIZING with it', async () => {
  fx = await openWorkerFixture();
  const e = await fx.endpoint({ workersMin: 1 });
  await fx.scaler.tick();
  const [w] = await fx.live(e.id);
  // what the provisioner writes as it asks docker to run the container
  await fx.services.store.transact(async (tx) => {
    const pod = (await tx.get('pods', w!.id))!;
    tx.put('pods', { ...pod, status: 'STARTING', statusReason: 'starting container' });
  });
  expect((await fx.workers.views(e))[0]).toMatchObject({ status: 'INITIALIZING', statusReason: 'starting container' });
  // the worker's first job-take lands before the provisioner's RUNNING write
  await fx.workers.seen(w!.id, { healthy: true, inProgress: [] });
  expect((await fx.workers.views(e))[0]).toMatchObject({ status: 'IDLE', statusReason: null });
  await fx.workers.seen(w!.id, { healthy: true, inProgress: ['job-1'] });
  expect((await fx.workers.views(e))[0]).toMatchObject({ status: 'RUNNING', statusReason: null });
});
