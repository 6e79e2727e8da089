// The autoscaler at the account's limits (docs/teams.md, "Admission", "Credits"): it starts workers up
// to the `workers` (and `gpus`) limit and stops there, saying so on the endpoint, while jobs wait in the
// queue (none fails); a raised limit takes effect at the next tick. A load-balancing endpoint whose
// account runs out of credits has its workers retired and no new one started.
import { afterEach, expect, test } from 'vitest';
import { openWorkerFixture, type WorkerFixture } from './worker-fixture.ts';

let fx: WorkerFixture;
afterEach(async () => fx?.close());

test('workers: the autoscaler stops at the limit, the endpoint says why, jobs stay queued; raising the limit lets it go on', async () => {
  fx = await openWorkerFixture({ hosts: [{ id: 'host-a', gpus: 8 }] });
  await fx.services.limits.patch(fx.principal.accountId, { workers: 2 });
  const e = await fx.endpoint({ workersMax: 5, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
  const jobs = await fx.enqueue(e.id, 4);
  await fx.scaler.tick();
  expect(await fx.live(e.id)).toHaveLength(2);
  const status = await fx.workers.status(e.id);
  expect(status.throttled).toBe(2);
  expect(status.reason).toMatch(/2 worker\(s\) wanted but not started: stopped at the account's limit: .*limit workers of 2 serverless workers: 2 in use, 1 more asked/);
  for (const id of jobs) expect((await fx.queue.get(id))?.status).toBe('IN_QUEUE');

  await fx.services.limits.patch(fx.principal.accountId, { workers: null, gpus: 3 });
  await fx.scaler.tick();
  expect(await fx.live(e.id)).toHaveLength(3);
  expect((await fx.workers.status(e.id)).reason).toMatch(/stopped at the account's limit: .*limit gpus of 3/);
  await fx.services.limits.patch(fx.principal.accountId, { gpus: null });
  await fx.scaler.tick();
  expect(await fx.live(e.id)).toHaveLength(4);
  expect((await fx.workers.status(e.id)).reason).toBeNull();
});

test('a load-balancing endpoint at a balance of 0: its workers are retired and no new one starts until credits are added', async () => {
  fx = await openWorkerFixture({ hosts: [{ id: 'host-a', gpus: 4 }] });
  const e = await fx.endpoint({ type: 'LOAD_BALANCER', workersMin: 1, workersMax: 2 });
  await fx.scaler.tick();
  const [w] = await fx.live(e.id);
  expect(w).toBeDefined();
  await fx.services.credits.grant(fx.principal.accountId, { amount: -100 });
  await fx.services.spendGuard.tick();
  expect(await fx.live(e.id)).toEqual([]);
  expect((await fx.services.store.get('pods', w!.id))?.worker).toMatchObject({ retiredReason: "the account's credits are used up", failed: false });
  await fx.scaler.tick();
  expect(await fx.live(e.id)).toEqual([]);
  expect((await fx.workers.status(e.id)).reason).toMatch(/stopped at the account's limit: Starting this serverless worker needs one hour of its cost in credits/);
  await fx.services.credits.grant(fx.principal.accountId, { amount: 50 });
  await fx.scaler.tick();
  expect(await fx.live(e.id)).toHaveLength(1);
});
