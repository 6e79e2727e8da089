// Faults: the store refuses a public model job's charge when the job becomes final (as a store that
// is down would: the transaction commits nothing). The job stays COMPLETED and uncharged until the
// sweep of charges (core/public-models/charge-sweep.ts) writes it: exactly once, with its cost,
// however long the store refused it (passes that fail move nothing on), within the job's retention.
import type { BillingRecord } from '../../../model/index.ts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { chargeId, PublicEndpointCharges } from '../../../core/public-models/index.ts';
import { ADMIN_KEY } from '../../harness/control-plane.ts';
import { eventually, startJobWorld, type JobWorld } from '../../api/jobs/in-process-workers.ts';
import { atCharge } from './charge-faults.ts';

const SLUG = 'sweep-model';
const PRICE = 0.000002; // USD per token
let world: JobWorld;

beforeAll(async () => {
  world = await startJobWorld();
  const ep = await world.newEndpoint(ADMIN_KEY);
  await world.startWorker(ep);
  const pub = await world.cp.api('/v2/public-endpoints', { method: 'POST', json: { slug: SLUG, endpointId: ep, name: 'sweep', pricing: { unit: 'token', usdPerUnit: PRICE, maxUnitsPerJob: 100_000 } } });
  expect(pub.status).toBe(201);
});
afterAll(async () => world?.close());

/** runs a job of `units` tokens by slug as the world's user; answers its id once COMPLETED */
async function completedJob(units: number): Promise<string> {
  const run = await world.cp.api(`/v2/${SLUG}/run`, { method: 'POST', key: world.user.key, json: { input: { output: { text: 'hi', usage: { units } } } } });
  expect(run.status).toBe(200);
  const { id } = (await run.json()) as { id: string };
  await eventually(async () => {
    const s = (await (await world.cp.api(`/v2/${SLUG}/status/${id}`, { key: world.user.key })).json()) as { status: string };
    return s.status === 'COMPLETED';
  }, 20_000, 'the job COMPLETED');
  return id;
}

const charges = (jobId: string) => world.cp.services.store.list('billing', { jobId });

test('a charge the store refused when the job became final is written by the next sweep, exactly once', async () => {
  let refused: string | undefined;
  const restore = atCharge(world.cp.services.store, (rec) => {
    if (refused) return;
    refused = rec.jobId;
    throw new Error('the store refused this charge (test)');
  });
  try {
    const id = await completedJob(1000);
    await eventually(async () => refused === id, 10_000, 'the charge refused');
    expect(await charges(id)).toEqual([]);

    const pass = await world.cp.services.publicCharges.sweep();
    expect(pass.charged).toEqual([expect.objectContaining({ id: chargeId(id), jobId: id, accountId: world.user.accountId, resourceId: SLUG, amountMicros: 2000, units: 1000 })]);
    expect(await charges(id)).toEqual([expect.objectContaining({ amountMicros: 2000 })]);
    const again = await world.cp.services.publicCharges.sweep();
    expect(again.checked).toBeGreaterThanOrEqual(1);
    expect(again.charged).toEqual([]);
    expect(await charges(id)).toHaveLength(1);
  } finally {
    restore();
  }
});

test('the store refuses charges for longer than the sweep looks back: the passes that fail move nothing on, the first that succeeds charges the job once', async () => {
  let down = true;
  const restore = atCharge(world.cp.services.store, () => {
    if (down) throw new Error('the store is down (test)');
  });
  // a sweep of its own, whose clock the test moves (the services' one runs on the real clock)
  let now = Date.now();
  const errors: string[] = [];
  const late: BillingRecord[] = [];
  const s = world.cp.services;
  const sweeper = new PublicEndpointCharges(s.jobQueue, s.store, s.publicEndpoints, s.credits, {
    sweep: { intervalMs: 0, clock: () => now },
    onError: (_e, what) => errors.push(what),
    onLate: (recs) => late.push(...recs),
  });
  try {
    const id = await completedJob(250);
    await eventually(async () => errors.includes(`charge for job ${id}`), 10_000, 'the charge refused');
    expect((await sweeper.sweep()).failed).toBeGreaterThanOrEqual(1);
    // 10 and 20 minutes later by the sweep's clock (the job is kept 30 min): far past its look-back
    now += 600_000;
    expect((await sweeper.sweep()).failed).toBeGreaterThanOrEqual(1);
    expect(await charges(id)).toEqual([]);
    now += 600_000;
    down = false;
    const pass = await sweeper.sweep();
    expect(pass.failed).toBe(0);
    expect(pass.charged.map((r) => r.jobId)).toContain(id);
    expect(late.filter((r) => r.jobId === id)).toHaveLength(1);
    expect(await charges(id)).toEqual([expect.objectContaining({ amountMicros: 500, units: 250 })]);
    expect((await sweeper.sweep()).charged).toEqual([]);
    expect(await charges(id)).toHaveLength(1);
  } finally {
    restore();
    await sweeper.close();
  }
});
