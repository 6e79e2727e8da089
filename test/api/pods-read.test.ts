// GET /v2/pods (filters), GET /v2/pods/{id}, DELETE /v2/pods/{id}: what each account sees, terminated
// pods (GET-able, hidden from lists unless asked for), 404 for other accounts.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import {
  call,
  cpuBody,
  createPod,
  DC2,
  expectJsonPathErrors,
  expectPodView,
  expectProblem,
  gpuBody,
  H100,
  keyFor,
  startPodsControlPlane,
  uniqueName,
} from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let other: { accountId: string; key: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  cp = await startPodsControlPlane();
  user = await cp.newAccount('read_write');
  other = await cp.newAccount('read_write');
  ids.gpu = (await createPod(cp, gpuBody({ name: 'alpha', tags: { team: 'ml', env: 'prod' } }), user.key)).body.id;
  ids.gpuDc2 = (await createPod(cp, gpuBody({ name: 'beta', dataCenterIds: [DC2], image: 'alpine:3.20', tags: { team: 'ml', env: 'dev' } }), user.key)).body.id;
  ids.cpu = (await createPod(cp, cpuBody({ name: 'gamma', tags: { team: 'web' } }), user.key)).body.id;
  ids.stopped = (await createPod(cp, gpuBody({ name: 'delta' }), user.key)).body.id;
  expect((await call(cp, `/v2/pods/${ids.stopped}/action`, { method: 'POST', key: user.key, json: { action: 'stop' } })).status).toBe(200);
  ids.gone = (await createPod(cp, gpuBody({ name: 'epsilon' }), user.key)).body.id;
  expect((await call(cp, `/v2/pods/${ids.gone}`, { method: 'DELETE', key: user.key })).status).toBe(204);
  ids.others = (await createPod(cp, gpuBody({ name: 'alpha' }), other.key)).body.id;
});
afterAll(async () => cp?.close());

async function list(query = '', key = user.key): Promise<string[]> {
  const c = await call(cp, `/v2/pods${query}`, { key });
  expect(c.status, c.text).toBe(200);
  expect(Object.keys(c.body)).toEqual(['pods']);
  for (const p of c.body.pods) expectPodView(p);
  return c.body.pods.map((p: { id: string }) => p.id);
}

describe('list', () => {
  test('an account sees its own live pods, oldest first, terminated hidden', async () => {
    expect(await list()).toEqual([ids.gpu, ids.gpuDc2, ids.cpu, ids.stopped]);
    expect(await list('', other.key)).toEqual([ids.others]);
  });

  test('status=TERMINATED or includeTerminated=true shows terminated pods', async () => {
    expect(await list('?status=TERMINATED')).toEqual([ids.gone]);
    expect(await list('?includeTerminated=true')).toEqual([ids.gpu, ids.gpuDc2, ids.cpu, ids.stopped, ids.gone]);
    expect(await list('?includeTerminated=false')).toEqual([ids.gpu, ids.gpuDc2, ids.cpu, ids.stopped]);
  });

  test('filters', async () => {
    expect(await list('?status=EXITED')).toEqual([ids.stopped]);
    expect(await list('?status=PROVISIONING')).toEqual([ids.gpu, ids.gpuDc2, ids.cpu]);
    expect(await list('?status=RUNNING')).toEqual([]);
    expect(await list('?name=beta')).toEqual([ids.gpuDc2]);
    expect(await list('?name=epsilon')).toEqual([]);
    expect(await list('?name=epsilon&includeTerminated=true')).toEqual([ids.gone]);
    expect(await list('?image=alpine:3.20')).toEqual([ids.gpuDc2]);
    expect(await list(`?gpuTypeId=${encodeURIComponent(H100)}`)).toEqual([ids.gpu, ids.gpuDc2, ids.stopped]);
    expect(await list(`?dataCenterId=${DC2}`)).toEqual([ids.gpuDc2]);
    expect(await list('?tag=team=ml')).toEqual([ids.gpu, ids.gpuDc2]);
    expect(await list('?tag=team=ml&tag=env=dev')).toEqual([ids.gpuDc2]);
    expect(await list('?tag=team=ml&status=EXITED')).toEqual([]);
    expect(await list('?templateId=tpl_none')).toEqual([]);
  });

  test('bad filters → 422 with JSONPath errors', async () => {
    for (const q of ['?status=BOGUS', '?status=running', '?includeTerminated=yes', '?tag=novalue', '?colour=red', '?status=EXITED&status=RUNNING']) {
      const c = await call(cp, `/v2/pods${q}`, { key: user.key });
      expectProblem(c, 422);
      expectJsonPathErrors(c);
    }
  });

  test('a read key may list and get', async () => {
    const reader = await keyFor(cp, user.accountId, 'read');
    expect((await list('', reader)).length).toBe(4);
    expect((await call(cp, `/v2/pods/${ids.gpu}`, { key: reader })).status).toBe(200);
  });
});

describe('get', () => {
  test('every field of 2.1 for GPU, CPU, stopped and terminated pods', async () => {
    for (const id of Object.values(ids).filter((i) => i !== ids.others)) {
      const c = await call(cp, `/v2/pods/${id}`, { key: user.key });
      expect(c.status).toBe(200);
      expect(c.res.headers.get('content-type')).toMatch(/^application\/json/);
      expectPodView(c.body);
    }
  });

  test('a terminated pod is still GET-able, with no actions and no cost', async () => {
    const c = await call(cp, `/v2/pods/${ids.gone}`, { key: user.key });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ status: 'TERMINATED', actions: [], cost: 0, runtime: null });
    const s = await call(cp, `/v2/pods/${ids.stopped}`, { key: user.key });
    expect(s.body).toMatchObject({ status: 'EXITED', actions: ['start', 'terminate'], cost: 0, runtime: null });
  });

  test('unknown ids and other accounts\' pods → 404, indistinguishable', async () => {
    const a = await call(cp, '/v2/pods/doesnotexist', { key: user.key });
    const b = await call(cp, `/v2/pods/${ids.others}`, { key: user.key });
    expectProblem(a, 404);
    expectProblem(b, 404);
    expect(b.body.detail).toBe(a.body.detail.replace('doesnotexist', ids.others!));
  });
});

describe('delete', () => {
  test('terminates, answers 204 with no body, and again 204', async () => {
    const id = (await createPod(cp, gpuBody({ name: uniqueName('del') }), user.key)).body.id;
    for (let i = 0; i < 2; i++) {
      const d = await call(cp, `/v2/pods/${id}`, { method: 'DELETE', key: user.key });
      expect(d.status).toBe(204);
      expect(d.text).toBe('');
    }
    const g = await call(cp, `/v2/pods/${id}`, { key: user.key });
    expect(g.body.status).toBe('TERMINATED');
    expect(await list()).not.toContain(id);
  });

  test('actions on a terminated pod → 409', async () => {
    for (const action of ['start', 'stop', 'restart', 'terminate'])
      expectProblem(await call(cp, `/v2/pods/${ids.gone}/action`, { method: 'POST', key: user.key, json: { action } }), 409);
  });

  test('another account\'s pod or an unknown id → 404 and nothing changes', async () => {
    expectProblem(await call(cp, `/v2/pods/${ids.gpu}`, { method: 'DELETE', key: other.key }), 404);
    expectProblem(await call(cp, '/v2/pods/doesnotexist', { method: 'DELETE', key: user.key }), 404);
    expect((await call(cp, `/v2/pods/${ids.gpu}`, { key: user.key })).body.status).toBe('PROVISIONING');
  });

  test('a read key may not delete → 403', async () => {
    const reader = await keyFor(cp, user.accountId, 'read');
    expectProblem(await call(cp, `/v2/pods/${ids.gpu}`, { method: 'DELETE', key: reader }), 403);
    expect((await call(cp, `/v2/pods/${ids.gpu}`, { key: user.key })).body.status).toBe('PROVISIONING');
  });
});
