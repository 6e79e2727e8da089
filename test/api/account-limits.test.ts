// Per-account limits through a listening control plane (docs/teams.md, "Quotas"): the GET/PATCH
// routes, who may call them, their validation, and admission on every path that places new work (REST
// create and start, GraphQL deploy, network volumes), with the refusal's shape: 403 QUOTA_EXCEEDED
// naming the limit, its value and the use; 402 for credits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100 80GB PCIe';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane({ rateLimits: 'minute=100000,hour=1000000,day=10000000' });
  await seedHosts(cp.services.store, [
    { gpus: 8, dataCenterId: 'dc-q' },
    { gpus: 8, dataCenterId: 'dc-q' },
    { gpus: 8, gpuName: A100, gpuTypeId: A100, dataCenterId: 'dc-q' },
  ]);
});
afterAll(async () => cp?.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json; type: string | null }> {
  const r = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  return { status: r.status, body: (await r.json()) as Json, type: r.headers.get('content-type') };
}

const pod = (name: string, gpu = H100, count = 1) => ({ name, image: 'img', disk: 1, gpu: { id: gpu, count } });
const setLimits = (accountId: string, body: unknown) => call(cp.adminKey, 'PATCH', `/v2/accounts/${accountId}/limits`, body);

describe('the limits routes', () => {
  it('a new account has every limit unset (null) with its use; it reads its own, not another account; an operator reads any', async () => {
    const a = await cp.newAccount();
    const b = await cp.newAccount();
    const own = await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      accountId: a.accountId,
      budgetAction: 'keep',
      limits: {
        gpus: { limit: null, used: 0 },
        gpusByType: {},
        pods: { limit: null, used: 0 },
        workers: { limit: null, used: 0 },
        volumeGb: { limit: null, used: 0 },
        spendPerHour: { limit: null, used: 0 },
        monthlyBudget: { limit: null, used: 0 },
      },
    });
    expect(own.body.month).toMatch(/^\d{4}-\d{2}$/);
    expect((await call(a.key, 'GET', `/v2/accounts/${b.accountId}/limits`)).status).toBe(404);
    expect((await call(cp.adminKey, 'GET', `/v2/accounts/${b.accountId}/limits`)).status).toBe(200);
    expect((await call(cp.adminKey, 'GET', '/v2/accounts/acct_nope/limits')).status).toBe(404);
  });

  it('only an operator changes limits; a tenant admin key gets 403 and nothing changes', async () => {
    const a = await cp.newAccount('admin');
    const r = await call(a.key, 'PATCH', `/v2/accounts/${a.accountId}/limits`, { gpus: 100 });
    expect(r.status).toBe(403);
    expect(r.type).toContain('application/problem+json');
    expect((await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`)).body.limits.gpus.limit).toBeNull();
  });

  it('PATCH sets, merges per GPU type and clears with null; the answer is the new view', async () => {
    const a = await cp.newAccount();
    const set = await setLimits(a.accountId, { gpus: 4, gpusByType: { [H100]: 2, [A100]: 3 }, pods: 3, workers: 60, volumeGb: 100, spendPerHour: 80, monthlyBudget: 1000, budgetAction: 'stop' });
    expect(set.status).toBe(200);
    expect(set.body.budgetAction).toBe('stop');
    expect(set.body.limits).toMatchObject({ gpus: { limit: 4 }, gpusByType: { [H100]: { limit: 2, used: 0 }, [A100]: { limit: 3 } }, pods: { limit: 3 }, workers: { limit: 60 }, spendPerHour: { limit: 80 }, monthlyBudget: { limit: 1000 } });
    const cleared = await setLimits(a.accountId, { gpus: null, gpusByType: { [A100]: null }, monthlyBudget: null });
    expect(cleared.body.limits.gpus.limit).toBeNull();
    expect(cleared.body.limits.gpusByType).toEqual({ [H100]: { limit: 2, used: 0 } });
    expect(cleared.body.limits.monthlyBudget.limit).toBeNull();
    expect(cleared.body.limits.pods.limit).toBe(3);
    // the record keeps only what is set
    const rec = await cp.services.store.get('accounts', a.accountId);
    expect(rec?.limits).toEqual({ gpusByType: { [H100]: 2 }, pods: 3, workers: 60, volumeGb: 100, spendPerHour: 80, budgetAction: 'stop' });
  });

  it('bad bodies are 422 problem+json with JSONPath errors and change nothing', async () => {
    const a = await cp.newAccount();
    for (const [body, path] of [
      [{ gpus: -1 }, '$.gpus'],
      [{ gpus: 1.5 }, '$.gpus'],
      [{ pods: 'three' }, '$.pods'],
      [{ spendPerHour: -0.5 }, '$.spendPerHour'],
      [{ budgetAction: 'pause' }, '$.budgetAction'],
      [{ gpusByType: { 'NVIDIA Imaginary 1GB': 1 } }, '$.gpusByType'],
      [{ gpusByType: { [H100]: -2 } }, '$.gpusByType'],
      [{ cpus: 3 }, '$'],
    ] as const) {
      const r = await setLimits(a.accountId, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.type).toContain('application/problem+json');
      expect(r.body.code).toBe('VALIDATION_FAILED');
      expect((r.body.errors as string[]).some((e) => e.startsWith(path)), JSON.stringify(r.body.errors)).toBe(true);
    }
    expect(await cp.services.store.get('accounts', a.accountId).then((x) => x?.limits)).toBeUndefined();
    expect((await setLimits('acct_nope', { gpus: 1 })).status).toBe(404);
  });
});

describe('admission', () => {
  it('GPUs in total: the create past the limit is 403 QUOTA_EXCEEDED naming the limit, value and use; nothing is placed', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { gpus: 3 });
    expect((await call(a.key, 'POST', '/v2/pods', pod('g1', H100, 2))).status).toBe(201);
    const r = await call(a.key, 'POST', '/v2/pods', pod('g2', A100, 2));
    expect(r.status).toBe(403);
    expect(r.type).toContain('application/problem+json');
    expect(r.body).toMatchObject({ code: 'QUOTA_EXCEEDED', status: 403, limit: { name: 'gpus', value: 3, used: 2, requested: 2 } });
    expect(r.body.detail).toContain('gpus of 3');
    expect((await cp.services.store.list('pods', { accountId: a.accountId })).map((p) => p.name)).toEqual(['g1']);
    expect((await call(a.key, 'POST', '/v2/pods', pod('g3', A100, 1))).status).toBe(201);
    const view = await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`);
    expect(view.body.limits.gpus).toEqual({ limit: 3, used: 3 });
    expect(view.body.limits.gpusByType).toEqual({ [H100]: { limit: null, used: 2 }, [A100]: { limit: null, used: 1 } });
    expect(view.body.limits.pods).toEqual({ limit: null, used: 2 });
  });

  it('GPUs per type: another type still places', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { gpusByType: { [H100]: 1 } });
    expect((await call(a.key, 'POST', '/v2/pods', pod('t1'))).status).toBe(201);
    const r = await call(a.key, 'POST', '/v2/pods', pod('t2'));
    expect(r.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: `gpusByType.${H100}`, value: 1, used: 1, requested: 1 } });
    expect((await call(a.key, 'POST', '/v2/pods', pod('t3', A100))).status).toBe(201);
  });

  it('pods: a stopped pod frees its place; starting it again while another holds the place is refused, and the pod stays stopped', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { pods: 1 });
    const first = await call(a.key, 'POST', '/v2/pods', pod('p1'));
    expect(first.status).toBe(201);
    expect((await call(a.key, 'POST', '/v2/pods', pod('p2'))).body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'pods', value: 1, used: 1 } });
    expect((await call(a.key, 'POST', `/v2/pods/${first.body.id}/action`, { action: 'stop' })).status).toBe(200);
    const second = await call(a.key, 'POST', '/v2/pods', pod('p2'));
    expect(second.status).toBe(201);
    const start = await call(a.key, 'POST', `/v2/pods/${first.body.id}/action`, { action: 'start' });
    expect(start.status).toBe(403);
    expect(start.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'pods' } });
    const stored = await cp.services.store.get('pods', first.body.id as string);
    expect(stored).toMatchObject({ status: 'EXITED', allocated: false, gpuUuids: [] });
  });

  it('resize: growing a placed pod past gpus is 403 and changes nothing; shrinking and growing within the limit pass; a dry run answers the same', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { gpus: 4 });
    const p = await call(a.key, 'POST', '/v2/pods', pod('r1', H100, 2));
    expect(p.status).toBe(201);
    // its own 2 GPUs count as free to its resize: 4 fits, 5 does not
    const over = await call(a.key, 'PATCH', `/v2/pods/${p.body.id}`, { gpu: { count: 5 } });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'gpus', value: 4, used: 0, requested: 5 } });
    expect(await cp.services.store.get('pods', p.body.id as string)).toMatchObject({ gpu: { count: 2 } });
    expect((await call(a.key, 'PATCH', `/v2/pods/${p.body.id}`, { gpu: { count: 4 } })).status).toBe(200);
    expect((await call(a.key, 'POST', '/v2/pods?dryRun=true', pod('r2'))).body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'gpus', used: 4 } });
    // a dry run replacing the pod counts its GPUs as free
    expect((await call(a.key, 'POST', `/v2/pods?dryRun=true&replaces=${p.body.id}`, pod('r1', H100, 4))).status).toBe(200);
    expect((await call(a.key, 'PATCH', `/v2/pods/${p.body.id}`, { gpu: { count: 1 } })).status).toBe(200);
  });

  it('interruptible pods count under interruptibleGpus only: beyond the on-demand gpus limit, and refused past their own', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { gpus: 1, interruptibleGpus: 2 });
    expect((await call(a.key, 'POST', '/v2/pods', pod('od'))).status).toBe(201);
    expect((await call(a.key, 'POST', '/v2/pods', { ...pod('sp1', H100, 2), interruptible: true })).status).toBe(201);
    const r = await call(a.key, 'POST', '/v2/pods', { ...pod('sp2'), interruptible: true });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'interruptibleGpus', value: 2, used: 2, requested: 1 } });
    const view = await call(a.key, 'GET', `/v2/accounts/${a.accountId}/limits`);
    expect(view.body.limits.gpus).toEqual({ limit: 1, used: 1 });
    expect(view.body.limits.interruptibleGpus).toEqual({ limit: 2, used: 2 });
  });

  it('spend per hour counts what runs: an H100 at 2.99 USD/h fits 5 USD/h once, not twice', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { spendPerHour: 5 });
    expect((await call(a.key, 'POST', '/v2/pods', pod('s1'))).status).toBe(201);
    const r = await call(a.key, 'POST', '/v2/pods', pod('s2'));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'spendPerHour', value: 5, used: 2.99, requested: 2.99 } });
  });

  it('GraphQL deploys answer the same code in errors[].extensions', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { gpus: 0 });
    const r = await cp.api('/graphql', {
      method: 'POST',
      key: a.key,
      json: { query: `mutation { podFindAndDeployOnDemand(input: {name: "q", imageName: "img", gpuTypeId: "${H100}", gpuCount: 1, containerDiskInGb: 1}) { id } }` },
    });
    const body = (await r.json()) as Json;
    expect(body.errors[0].extensions).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'gpus', value: 0, used: 0, requested: 1 } });
    expect(await cp.services.store.list('pods', { accountId: a.accountId })).toEqual([]);
  });

  it('network volumes count their GB on create and on growth', async () => {
    const a = await cp.newAccount();
    await setLimits(a.accountId, { volumeGb: 50 });
    const v = await call(a.key, 'POST', '/v2/network-volumes', { name: 'v1', size: 40, dataCenterId: 'dc-q' });
    expect(v.status, JSON.stringify(v.body)).toBe(201);
    expect((await call(a.key, 'POST', '/v2/network-volumes', { name: 'v2', size: 20, dataCenterId: 'dc-q' })).body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'volumeGb', value: 50, used: 40, requested: 20 } });
    expect((await call(a.key, 'PATCH', `/v2/network-volumes/${v.body.id}`, { size: 60 })).body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'volumeGb', requested: 20 } });
    expect((await call(a.key, 'PATCH', `/v2/network-volumes/${v.body.id}`, { size: 50 })).status).toBe(200);
  });

  it('credits: a pod needs one hour of its cost left (402 CREDITS_EXHAUSTED); the operator account is not limited by credits', async () => {
    const poor = await cp.newAccount('read_write', 2);
    const r = await call(poor.key, 'POST', '/v2/pods', pod('c1'));
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ code: 'CREDITS_EXHAUSTED', needed: 2.99 });
    expect((await call(poor.key, 'POST', '/v2/pods', pod('c2', A100))).status).toBe(201);
    expect((await call(cp.adminKey, 'POST', '/v2/pods', pod(`op-${Date.now()}`))).status).toBe(201);
  });

  it('50 concurrent creates against a quota of 5 GPUs place exactly 5; the rest are QUOTA_EXCEEDED (embedded store)', async () => {
    const a = await cp.newAccount('read_write', 1000);
    await setLimits(a.accountId, { gpus: 5 });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => call(a.key, 'POST', '/v2/pods', pod(`race-${i}`))));
    expect(answers.filter((x) => x.status === 201)).toHaveLength(5);
    expect(answers.filter((x) => x.status !== 201).map((x) => x.body.code)).toEqual(Array(45).fill('QUOTA_EXCEEDED'));
    const placed = (await cp.services.store.list('pods', { accountId: a.accountId })).filter((p) => p.allocated);
    expect(placed.reduce((n, p) => n + p.gpu!.count, 0)).toBe(5);
  });
});
