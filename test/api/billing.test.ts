// Billing: storage accrues while a network volume exists (re-rated on growth, closed on delete), usage
// is reported in UTC calendar buckets per resource, and the balance is credits minus accrued usage.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { VOLUME_PRICE_PER_GB_MONTH } from '../../core/billing/billing.ts';
import { bucketStart, nextBucket } from '../../core/billing/billing-service.ts';
import type { BillingRecord } from '../../model/records/resources.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8, dataCenterId: 'dc-a' }]);
});
afterAll(async () => cp?.close());

async function call(key: string, path: string, method = 'GET', json?: unknown): Promise<{ status: number; body: J }> {
  const res = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

let n = 0;
async function seedRecord(accountId: string, r: Partial<BillingRecord> & Pick<BillingRecord, 'kind' | 'resourceId' | 'rate' | 'startedAt'>): Promise<void> {
  const rec: BillingRecord = { id: `bill_seed_${++n}`, accountId, gpuTypeId: null, gpuRate: 0, cpuRate: 0, diskRate: 0, endedAt: null, ...r };
  await cp.services.store.transact((tx) => tx.put('billing', rec));
}

test('a network volume accrues storage from create to delete, re-rated when it grows', async () => {
  const { accountId, key } = await cp.newAccount();
  const v = await call(key, '/v2/network-volumes', 'POST', { name: 'data', size: 730, dataCenterId: 'dc-a' });
  expect(v.status).toBe(201);
  const open = () => cp.services.store.list('billing', { accountId, resourceId: v.body.id, endedAt: null });
  const [first] = await open();
  expect(first).toMatchObject({ kind: 'networkVolume', rate: 730 * VOLUME_PRICE_PER_GB_MONTH / 730, diskRate: first!.rate, gpuRate: 0 });
  await call(key, `/v2/network-volumes/${v.body.id}`, 'PATCH', { name: 'renamed' });
  expect((await open()).map((r) => r.id)).toEqual([first!.id]); // a rename does not re-rate
  await call(key, `/v2/network-volumes/${v.body.id}`, 'PATCH', { size: 1460 });
  const [second] = await open();
  expect(second!.rate).toBeCloseTo(2 * first!.rate, 10);
  expect((await cp.services.store.get('billing', first!.id))!.endedAt).not.toBeNull();

  const report = await call(key, '/v2/billing/network-volumes?bucketSize=hour');
  expect(report.status).toBe(200);
  expect(report.body.records.length).toBeGreaterThan(0);
  expect(report.body.records.every((r: J) => r.networkVolumeId === v.body.id && r.gpuAmount === 0 && r.diskAmount === r.totalAmount)).toBe(true);

  expect((await call(key, `/v2/network-volumes/${v.body.id}`, 'DELETE')).status).toBe(204);
  expect(await open()).toEqual([]);
});

test('a pod opens a billing record while it holds compute', async () => {
  const { accountId, key } = await cp.newAccount();
  const pod = await call(key, '/v2/pods', 'POST', { name: 'billed', image: 'busybox', gpu: { id: H100 } });
  const recs = await cp.services.store.list('billing', { accountId, resourceId: pod.body.id });
  expect(recs).toMatchObject([{ kind: 'pod', rate: pod.body.cost, gpuRate: pod.body.cost, endedAt: null }]);
  await call(key, `/v2/pods/${pod.body.id}/action`, 'POST', { action: 'stop' });
  expect((await cp.services.store.list('billing', { accountId, resourceId: pod.body.id, endedAt: null })).length).toBe(0);
});

describe('records in buckets', () => {
  let key = '';
  let accountId = '';
  beforeAll(async () => {
    ({ key, accountId } = await cp.newAccount('read_write', 100));
    // pod-1: 00:30 to 03:00 at $2/h; pod-2: 01:00 to 01:15 at $4/h (CPU); a volume all day at $0.24/h
    await seedRecord(accountId, { kind: 'pod', resourceId: 'pod-1', rate: 2, gpuRate: 2, startedAt: '2024-01-01T00:30:00.000Z', endedAt: '2024-01-01T03:00:00.000Z' });
    await seedRecord(accountId, { kind: 'pod', resourceId: 'pod-2', rate: 4, cpuRate: 4, startedAt: '2024-01-01T01:00:00.000Z', endedAt: '2024-01-01T01:15:00.000Z' });
    await seedRecord(accountId, { kind: 'networkVolume', resourceId: 'vol-1', rate: 0.24, diskRate: 0.24, startedAt: '2024-01-01T00:00:00.000Z', endedAt: '2024-01-02T00:00:00.000Z' });
  });
  const range = 'startTime=2024-01-01T00:00:00Z&endTime=2024-01-02T00:00:00Z';

  test('hourly buckets per pod, with GPU and CPU amounts split', async () => {
    const r = await call(key, `/v2/billing/pods?${range}&bucketSize=hour`);
    expect(r.status).toBe(200);
    expect(r.body.records).toEqual([
      { startTime: '2024-01-01T00:00:00.000Z', endTime: '2024-01-01T01:00:00.000Z', totalAmount: 1, gpuAmount: 1, cpuAmount: 0, diskAmount: 0, podId: 'pod-1' },
      { startTime: '2024-01-01T01:00:00.000Z', endTime: '2024-01-01T02:00:00.000Z', totalAmount: 2, gpuAmount: 2, cpuAmount: 0, diskAmount: 0, podId: 'pod-1' },
      { startTime: '2024-01-01T01:00:00.000Z', endTime: '2024-01-01T02:00:00.000Z', totalAmount: 1, gpuAmount: 0, cpuAmount: 1, diskAmount: 0, podId: 'pod-2' },
      { startTime: '2024-01-01T02:00:00.000Z', endTime: '2024-01-01T03:00:00.000Z', totalAmount: 2, gpuAmount: 2, cpuAmount: 0, diskAmount: 0, podId: 'pod-1' },
    ]);
    expect(r.body.metadata).toEqual({
      query: { startTime: '2024-01-01T00:00:00.000Z', endTime: '2024-01-02T00:00:00.000Z', bucketSize: 'hour', kind: 'pod', resourceId: null },
      recordCount: 4,
      totals: { totalAmount: 6, gpuAmount: 5, cpuAmount: 1, diskAmount: 0 },
    });
  });

  test('the default bucket is a day; podId narrows; the range clips', async () => {
    const day = await call(key, `/v2/billing/pods?${range}&podId=pod-1`);
    expect(day.body.records).toEqual([
      { startTime: '2024-01-01T00:00:00.000Z', endTime: '2024-01-02T00:00:00.000Z', totalAmount: 5, gpuAmount: 5, cpuAmount: 0, diskAmount: 0, podId: 'pod-1' },
    ]);
    const clipped = await call(key, '/v2/billing/pods?startTime=2024-01-01T02:30:00Z&endTime=2024-01-01T12:00:00Z&podId=pod-1');
    expect(clipped.body.metadata.totals.totalAmount).toBe(1);
  });

  test('network volume storage per day', async () => {
    const r = await call(key, `/v2/billing/network-volumes?${range}&networkVolumeId=vol-1`);
    expect(r.body.records).toEqual([
      { startTime: '2024-01-01T00:00:00.000Z', endTime: '2024-01-02T00:00:00.000Z', totalAmount: 5.76, gpuAmount: 0, cpuAmount: 0, diskAmount: 5.76, networkVolumeId: 'vol-1' },
    ]);
  });

  test("another account sees none of these records, even by id", async () => {
    const other = await cp.newAccount();
    const r = await call(other.key, `/v2/billing/pods?${range}&podId=pod-1`);
    expect(r.status).toBe(200);
    expect(r.body.records).toEqual([]);
    expect((await call(other.key, `/v2/billing/endpoints?${range}`)).body.records).toEqual([]);
  });

  test('the balance is credits minus all accrued usage', async () => {
    const account = await call(key, '/v2/account');
    expect(account.body.clientBalance).toBeCloseTo(100 - 6 - 5.76, 6);
    const b = await cp.services.billing.balance({ accountId, keyId: 'k', scope: 'read', operator: false });
    expect(b).toEqual({ balance: 100, usage: 11.76, held: 0, clientBalance: 88.24 });
  });

  test('bad queries: 422 for unknown or malformed parameters, 400 for an empty or oversized range', async () => {
    const bad = await call(key, '/v2/billing/pods?bucketSize=minute&startTime=yesterday&foo=1');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining(['$.foo: unknown property', '$.bucketSize: must be one of "hour", "day", "week", "month", "year"', '$.startTime: must match format "date-time"']),
    );
    expect((await call(key, '/v2/billing/network-volumes?podId=pod-1')).status).toBe(422);
    expect((await call(key, '/v2/billing/pods?startTime=2024-01-02T00:00:00Z&endTime=2024-01-01T00:00:00Z')).status).toBe(400);
    expect((await call(key, '/v2/billing/pods?startTime=2020-01-01T00:00:00Z&endTime=2024-01-01T00:00:00Z&bucketSize=hour')).status).toBe(400);
    expect((await call(key, '/v2/billing/serverless?serverlessId=abc')).status).toBe(200);
  });
});

test('buckets follow UTC calendar boundaries (weeks start on Monday)', () => {
  const t = Date.parse('2024-02-29T13:45:00Z'); // a Thursday in a leap February
  expect(new Date(bucketStart(t, 'hour')).toISOString()).toBe('2024-02-29T13:00:00.000Z');
  expect(new Date(bucketStart(t, 'day')).toISOString()).toBe('2024-02-29T00:00:00.000Z');
  expect(new Date(bucketStart(t, 'week')).toISOString()).toBe('2024-02-26T00:00:00.000Z');
  expect(new Date(bucketStart(t, 'month')).toISOString()).toBe('2024-02-01T00:00:00.000Z');
  expect(new Date(nextBucket(bucketStart(t, 'month'), 'month')).toISOString()).toBe('2024-03-01T00:00:00.000Z');
  expect(new Date(nextBucket(bucketStart(t, 'year'), 'year')).toISOString()).toBe('2025-01-01T00:00:00.000Z');
  expect(new Date(bucketStart(Date.parse('2024-03-03T23:59:59Z'), 'week')).toISOString()).toBe('2024-02-26T00:00:00.000Z'); // Sunday
});
