// Credits are reserved, not only checked (issue 18 item 5; docs/security.md): a public model job holds
// maxUnitsPerJob × usdPerUnit of its caller's credits from submission to its end, in the transaction
// that checks the balance. Against a listening control plane with in-process workers of the worker
// SDK; both stores (GPUFLEET_TEST_STORE=postgres). Faults at the moment named: the enqueue refused
// after the hold was made; the control plane gone between a hold and its job (the record it leaves).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_KEY } from '../../harness/control-plane.ts';
import { eventually, startJobWorld, type JobWorld } from '../../api/jobs/in-process-workers.ts';

let world: JobWorld;
/** 1 USD a request; 0.01 USD a token, at most 100 tokens a job (hold 1 USD) */
const PER_REQUEST = 'hold-request';
const PER_TOKEN = 'hold-token';
let requestEp = '';

type J = Record<string, any>;
const json = async (r: Response) => (await r.json()) as J;
const run = (slug: string, key: string, input: unknown, verb = 'run') => world.cp.api(`/v2/${slug}/${verb}`, { method: 'POST', key, json: { input } });
const holds = (accountId: string) => world.cp.services.store.list('creditHolds', { accountId });
const account = async (key: string) => json(await world.cp.api('/v2/account', { key }));
async function myselfBalance(key: string): Promise<number> {
  const res = await fetch(`${world.cp.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ myself { clientBalance } }' }),
  });
  return (await json(res)).data.myself.clientBalance;
}

beforeAll(async () => {
  world = await startJobWorld();
  const tpl = await json(await world.cp.api('/v2/templates', { method: 'POST', json: { name: 'hold-model', image: 'busybox', serverless: true } }));
  const publish = async (slug: string, pricing: J) => {
    const ep = await json(await world.cp.api('/v1/endpoints', { method: 'POST', json: { templateId: tpl.id, gpuTypeIds: ['ADA_24'] } }));
    await world.startWorker(ep.id, { concurrency: 40 });
    const r = await world.cp.api('/v2/public-endpoints', { method: 'POST', key: ADMIN_KEY, json: { slug, endpointId: ep.id, name: slug, pricing } });
    expect(r.status, await r.clone().text()).toBe(201);
    return ep.id as string;
  };
  requestEp = await publish(PER_REQUEST, { unit: 'request', usdPerUnit: 1 });
  await publish(PER_TOKEN, { unit: 'token', usdPerUnit: 0.01, maxUnitsPerJob: 100 });
});
afterAll(async () => world?.close());

describe('a concurrent burst', () => {
  test('30 runs of a 1 USD model against 0.5 USD: every one 402 (the hold does not fit), nothing enqueued, nothing owed', async () => {
    const poor = await world.cp.newAccount('read_write', 0.5);
    const answers = await Promise.all(Array.from({ length: 30 }, () => run(PER_REQUEST, poor.key, { sleep_ms: 100 })));
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill(402));
    const body = await json(answers[0]!);
    expect(body.code).toBe('CREDITS_EXHAUSTED');
    expect(body.detail).toMatch(/holds up to 1 USD until it ends, more than the account has left \(0\.5 USD/);
    expect(await holds(poor.accountId)).toEqual([]);
    expect((await account(poor.key)).clientBalance).toBe(0.5);
  });

  test('30 runs against 2.5 USD: exactly 2 accepted, 28 refused; clientBalance (REST and GraphQL) shows the holds; settled at the price; taking credits back stops nothing', async () => {
    const some = await world.cp.newAccount('read_write', 2.5);
    const answers = await Promise.all(Array.from({ length: 30 }, () => run(PER_REQUEST, some.key, { sleep_ms: 1500 })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 402)).toHaveLength(28);
    const ids = await Promise.all(answers.filter((r) => r.status === 200).map(async (r) => (await json(r)).id as string));
    // while they run: 2 USD held
    expect((await holds(some.accountId)).map((h) => [h.jobId, h.amountMicros]).sort()).toEqual(ids.map((id) => [id, 1_000_000]).sort());
    expect(await account(some.key)).toMatchObject({ balance: 2.5, usage: 0, held: 2, clientBalance: 0.5 });
    expect(await myselfBalance(some.key)).toBe(0.5);
    // running out of credits stops nothing: the operator takes credits back, the jobs still finish
    expect((await world.cp.api(`/v2/accounts/${some.accountId}/credits`, { method: 'POST', key: ADMIN_KEY, json: { amount: -2 } })).status).toBe(200);
    for (const id of ids) await eventually(async () => (await json(await world.cp.api(`/v2/${PER_REQUEST}/status/${id}`, { key: some.key }))).status === 'COMPLETED', 15_000, `job ${id}`);
    // settled: each charge replaced its hold
    await eventually(async () => (await holds(some.accountId)).length === 0, 10_000, 'the holds settled');
    expect((await world.cp.services.store.list('billing', { accountId: some.accountId })).map((b) => b.amountMicros)).toEqual([1_000_000, 1_000_000]);
    expect(await account(some.key)).toMatchObject({ balance: 0.5, usage: 2, held: 0, clientBalance: -1.5 });
  });
});

describe('the end of a hold', () => {
  test('a cancelled job releases its hold; so does a failed one; neither is charged', async () => {
    const a = await world.cp.newAccount('read_write', 1);
    const long = await json(await run(PER_REQUEST, a.key, { sleep_ms: 30_000 }));
    expect((await holds(a.accountId)).map((h) => h.jobId)).toEqual([long.id]);
    // 1 USD held: nothing left for a second job
    expect((await run(PER_REQUEST, a.key, {})).status).toBe(402);
    expect((await world.cp.api(`/v2/${PER_REQUEST}/cancel/${long.id}`, { method: 'POST', key: a.key })).status).toBe(200);
    await eventually(async () => (await holds(a.accountId)).length === 0, 10_000, 'the hold released on cancel');
    const failed = await json(await run(PER_REQUEST, a.key, { fail: 'boom' }, 'runsync'));
    expect(failed.status).toBe('FAILED');
    await eventually(async () => (await holds(a.accountId)).length === 0, 10_000, 'the hold released on failure');
    expect(await world.cp.services.store.list('billing', { accountId: a.accountId })).toEqual([]);
    expect((await account(a.key)).clientBalance).toBe(1);
  });

  test('a job that reports more units than maxUnitsPerJob is charged its hold (100 tokens), not 500', async () => {
    const a = await world.cp.newAccount('read_write', 5);
    const done = await json(await run(PER_TOKEN, a.key, { output: { text: 'x', usage: { units: 500 } } }, 'runsync'));
    expect(done.status).toBe('COMPLETED');
    expect(done.output).toMatchObject({ usage: { units: 500, unit: 'token' }, cost: 1 });
    await eventually(async () => (await world.cp.services.store.list('billing', { accountId: a.accountId })).length === 1, 10_000, 'the charge');
    expect(await account(a.key)).toMatchObject({ usage: 1, held: 0, clientBalance: 4 });
  });

  test('the operator publishing a model holds nothing for its own calls', async () => {
    const before = (await world.cp.services.store.list('creditHolds')).length;
    const r = await run(PER_REQUEST, ADMIN_KEY, { sleep_ms: 500 });
    expect(r.status).toBe(200);
    expect((await world.cp.services.store.list('creditHolds')).length).toBe(before);
  });

  test('an enqueue refused after the hold was made releases the hold at once', async () => {
    const a = await world.cp.newAccount('read_write', 3);
    const queue = world.cp.services.jobQueue;
    const enqueue = queue.enqueue.bind(queue);
    let seenHold = -1;
    queue.enqueue = async () => {
      seenHold = (await holds(a.accountId)).length; // the hold exists at the moment the enqueue fails
      throw new Error('queue write failed');
    };
    try {
      expect((await run(PER_REQUEST, a.key, {})).status).toBe(500);
    } finally {
      queue.enqueue = enqueue;
    }
    expect(seenHold).toBe(1);
    expect(await holds(a.accountId)).toEqual([]);
    expect((await account(a.key)).clientBalance).toBe(3);
  });

  test('holds left by a crash (between the hold and its enqueue; after a job ended) are ended by the sweep; a running job keeps its hold', async () => {
    const a = await world.cp.newAccount('read_write', 10);
    const old = new Date(Date.now() - 5 * 60_000).toISOString();
    const base = { accountId: a.accountId, resourceId: PER_REQUEST, endpointId: requestEp, amountMicros: 1_000_000, createdAt: old };
    const running = await json(await run(PER_REQUEST, a.key, { sleep_ms: 20_000 }));
    const finished = await json(await run(PER_REQUEST, a.key, { fail: 'x' }, 'runsync'));
    await eventually(async () => (await holds(a.accountId)).length === 1, 10_000, 'the failed job released');
    // what a SIGKILL leaves: a hold committed before its enqueue; a hold of a job that ended while its release was lost;
    // a hold of a job the queue no longer knows
    await world.cp.services.store.transact((tx) => {
      tx.put('creditHolds', { ...base, id: 'hold_crash_before_enqueue', jobId: null });
      tx.put('creditHolds', { ...base, id: 'hold_crash_after_end', jobId: finished.id });
      tx.put('creditHolds', { ...base, id: 'hold_crash_gone', jobId: 'no-such-job' });
      tx.put('creditHolds', { ...base, id: 'hold_running_old', jobId: running.id });
    });
    expect((await account(a.key)).held).toBe(5);
    const pass = await world.cp.services.publicCharges.sweepHolds();
    expect(pass).toEqual({ released: 3, settled: 0 });
    expect((await holds(a.accountId)).map((h) => h.jobId).sort()).toEqual([running.id, running.id]);
    expect((await account(a.key)).held).toBe(2);
  });
});
