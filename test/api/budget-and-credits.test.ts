// Money over time with a clock the test controls (docs/teams.md, "Monthly budget" and "Credits"): the
// control plane's quota clock (StartOptions.quotaClock) is moved forward by hours, never slept, and the
// spend guard's pass is run at each step (its own loop is set to an hour, out of the way).
// - monthly budget: budget.threshold events at 50, 80 and 100 % (once each), 402 BUDGET_EXHAUSTED for
//   new work at 100 %, running pods kept (budgetAction keep) or stopped (stop, disks and volumes kept),
//   and a new calendar month (UTC) starting over;
// - credits: a pod whose account runs out is stopped, never terminated, its volume kept; it cannot start
//   again (402) until credits are added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodRecord } from '../../model/index.ts';
import { monthStart } from '../../core/quotas/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

const H100 = 'NVIDIA H100 80GB HBM3'; // 2.99 USD/h on SECURE
const A100 = 'NVIDIA A100 80GB PCIe'; // 1.64 USD/h
const HOUR = 3_600_000;

let clock = Date.now();
let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane({ quotaClock: () => clock, config: { spendGuardIntervalMs: HOUR } });
  await seedHosts(cp.services.store, [
    { gpus: 8, dataCenterId: 'dc-m' },
    { gpus: 8, gpuName: A100, gpuTypeId: A100, dataCenterId: 'dc-m' },
  ]);
});
afterAll(async () => cp?.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
  const r = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  return { status: r.status, body: (await r.json()) as Json };
}

async function createPod(key: string, name: string, gpu = H100, extra: Record<string, unknown> = {}): Promise<PodRecord> {
  const r = await call(key, 'POST', '/v2/pods', { name, image: 'img', disk: 1, gpu: { id: gpu }, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return (await cp.services.store.get('pods', r.body.id as string))!;
}

/** when the pod's open billing record started (real time: pods are written with the wall clock) */
async function accruingSince(podId: string): Promise<number> {
  const [rec] = (await cp.services.store.list('billing', { resourceId: podId })).filter((b) => b.endedAt === null);
  return Date.parse(rec!.startedAt);
}

/**
 * The moment `hours` of accrual after `from` inside one calendar month: from the record's start, or from
 * the next month's start when the steps would cross a month's end (a run late on the last day).
 */
function monthBase(from: number, span: number): number {
  return monthStart(from + span) > from ? monthStart(from + span) : from;
}

const budgetEvents = async (key: string, accountId: string) =>
  ((await call(key, 'GET', `/v2/events?resourceId=${accountId}`)).body.events as Json[]).filter((e) => e.type === 'budget.threshold');

describe('monthly budget', () => {
  it('thresholds at 50, 80 and 100 % are events once each; at 100 % new work is 402 and running pods are kept (keep)', async () => {
    const a = await cp.newAccount('read_write', 1000);
    expect((await call(cp.adminKey, 'PATCH', `/v2/accounts/${a.accountId}/limits`, { monthlyBudget: 10 })).status).toBe(200);
    const pod = await createPod(a.key, 'b1');
    const base = monthBase(await accruingSince(pod.id), 5 * HOUR);
    const at = async (hours: number) => {
      clock = base + hours * HOUR;
      await cp.services.spendGuard.tick();
      return (await budgetEvents(a.key, a.accountId)).map((e) => e.status);
    };
    expect(await at(1)).toEqual([]); // 2.99 of 10
    expect(await at(2)).toEqual(['50%']); // 5.98
    expect(await at(2.5)).toEqual(['50%']); // 7.475: no new threshold, nothing repeated
    expect(await at(3)).toEqual(['50%', '80%']); // 8.97
    expect(await at(3.5)).toEqual(['50%', '80%', '100%']); // 10.465
    expect(await at(3.6)).toEqual(['50%', '80%', '100%']);
    const [e100] = (await budgetEvents(a.key, a.accountId)).slice(-1);
    expect(e100).toMatchObject({ resourceType: 'account', resourceId: a.accountId, previousStatus: '80%', actor: 'system' });
    expect(e100!.reason).toContain('of 10 USD spent');

    const refused = await call(a.key, 'POST', '/v2/pods', { name: 'b2', image: 'img', disk: 1, gpu: { id: A100 } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'BUDGET_EXHAUSTED', limit: { name: 'monthlyBudget', value: 10 } });
    expect(refused.body.limit.used).toBeGreaterThanOrEqual(10);
    // keep: the running pod runs on
    expect(await cp.services.store.get('pods', pod.id)).toMatchObject({ status: pod.status, allocated: true });
    const view = await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`);
    expect(view.body.limits.monthlyBudget.limit).toBe(10);
    expect(view.body.limits.monthlyBudget.used).toBeCloseTo(2.99 * 3.6, 2);
    // an operator sees the account's budget events too
    expect((await budgetEvents(cp.adminKey, a.accountId)).length).toBe(3);
  });

  it('budgetAction stop: at 100 % the pods stop (not terminated, volume kept) and cannot start; the next month starts over', async () => {
    const a = await cp.newAccount('read_write', 1000);
    await call(cp.adminKey, 'PATCH', `/v2/accounts/${a.accountId}/limits`, { monthlyBudget: 5, budgetAction: 'stop' });
    const vol = await call(a.key, 'POST', '/v2/network-volumes', { name: 'keep-me', size: 10, dataCenterId: 'dc-m' });
    expect(vol.status).toBe(201);
    const pod = await createPod(a.key, 's1', H100, { mounts: { network: [{ volumeId: vol.body.id, path: '/workspace' }] } });
    const base = monthBase(await accruingSince(pod.id), 3 * HOUR);
    clock = base + 1 * HOUR;
    await cp.services.spendGuard.tick();
    expect(await cp.services.store.get('pods', pod.id)).toMatchObject({ allocated: true });
    clock = base + 2 * HOUR; // 5.98 of 5
    await cp.services.spendGuard.tick();
    const stopped = await cp.services.store.get('pods', pod.id);
    expect(stopped).toMatchObject({ status: 'EXITED', desiredStatus: 'EXITED', allocated: false, gpuUuids: [] });
    expect(stopped!.statusReason).toContain('monthly budget');
    expect(stopped!.terminatedAt).toBeNull();
    expect(await cp.services.store.get('networkVolumes', vol.body.id as string)).toBeDefined();
    // its billing stopped with it
    expect((await cp.services.store.list('billing', { resourceId: pod.id })).every((b) => b.endedAt !== null)).toBe(true);
    const start = await call(a.key, 'POST', `/v2/pods/${pod.id}/action`, { action: 'start' });
    expect(start.status).toBe(402);
    expect(start.body.code).toBe('BUDGET_EXHAUSTED');

    // the first minute of the next month (UTC): nothing spent yet, so it starts, and the thresholds start over
    clock = monthStart(base + 40 * 24 * HOUR) + 60_000;
    expect((await call(a.key, 'POST', `/v2/pods/${pod.id}/action`, { action: 'start' })).status).toBe(200);
    expect((await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`)).body.limits.monthlyBudget.used).toBeLessThan(0.1);
  });
});

describe('credits', () => {
  it('at a balance of 0 pods are stopped, never terminated, volume kept; starting needs an hour of credits again', async () => {
    const a = await cp.newAccount('read_write', 5);
    const vol = await call(a.key, 'POST', '/v2/network-volumes', { name: 'data', size: 10, dataCenterId: 'dc-m' });
    const pod = await createPod(a.key, 'c1', A100, { mounts: { network: [{ volumeId: vol.body.id, path: '/workspace' }] } });
    const since = await accruingSince(pod.id);
    clock = since + 2 * HOUR; // 3.28 of 5 used
    await cp.services.spendGuard.tick();
    expect(await cp.services.store.get('pods', pod.id)).toMatchObject({ allocated: true });
    clock = since + 3.5 * HOUR; // 5.74 of 5 used
    await cp.services.spendGuard.tick();
    const stopped = await cp.services.store.get('pods', pod.id);
    expect(stopped).toMatchObject({ status: 'EXITED', allocated: false });
    expect(stopped!.statusReason).toContain('credits are used up');
    expect(stopped!.terminatedAt).toBeNull();
    expect(await cp.services.store.get('networkVolumes', vol.body.id as string)).toBeDefined();
    expect((await call(a.key, 'GET', `/v2/pods/${pod.id}`)).status).toBe(200);

    const refused = await call(a.key, 'POST', `/v2/pods/${pod.id}/action`, { action: 'start' });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('CREDITS_EXHAUSTED');
    expect((await call(cp.adminKey, 'POST', `/v2/accounts/${a.accountId}/credits`, { amount: 10 })).status).toBe(200);
    expect((await call(a.key, 'POST', `/v2/pods/${pod.id}/action`, { action: 'start' })).status).toBe(200);
  });

  it('an operator account is never stopped for credits', async () => {
    const pod = await createPod(cp.adminKey, `op-${Date.now()}`, A100);
    clock = (await accruingSince(pod.id)) + 1000 * HOUR;
    await cp.services.spendGuard.tick();
    expect(await cp.services.store.get('pods', pod.id)).toMatchObject({ allocated: true });
  });

  it('at a balance of 0 a free pod (costPerHr 0, which admission lets start at 0 credits) keeps running; a paid one of the same account stops', async () => {
    const funded = await cp.newAccount('read_write', 1000);
    const fresh = await cp.newAccount('read_write', 0);
    const model = await createPod(funded.key, 'model');
    // the fresh tenant's two placed pods, written as the store holds them (no billing accrues for the free one)
    const free: PodRecord = { ...model, id: 'free-at-zero', name: 'free', accountId: fresh.accountId, costPerHr: 0, gpuUuids: [] };
    const paid: PodRecord = { ...model, id: 'paid-at-zero', name: 'paid', accountId: fresh.accountId, costPerHr: 2.99, gpuUuids: [] };
    await cp.services.store.transact((tx) => {
      tx.put('pods', free);
      tx.put('pods', paid);
    });
    await cp.services.spendGuard.tick();
    expect(await cp.services.store.get('pods', free.id)).toMatchObject({ allocated: true, status: model.status });
    const stopped = await cp.services.store.get('pods', paid.id);
    expect(stopped).toMatchObject({ status: 'EXITED', allocated: false });
    expect(stopped!.statusReason).toContain('credits are used up');
  });
});
