// PATCH /v2/pods/{id}: the update semantics of 2.2 rule 4 (400 vs 422 exactly), the limits of part 8
// on update, and that a rejected PATCH changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import {
  call,
  cpuBody,
  createPod,
  DC,
  expectJsonPathErrors,
  expectPodView,
  expectProblem,
  gpuBody,
  startPodsControlPlane,
  uniqueName,
} from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
const VOL = 'vol_update_1';
const VOL2 = 'vol_update_2';

beforeAll(async () => {
  cp = await startPodsControlPlane();
  user = await cp.newAccount('read_write');
  const now = new Date().toISOString();
  await cp.services.store.transact((tx) => {
    for (const id of [VOL, VOL2])
      tx.put('networkVolumes', { id, accountId: user.accountId, name: id, size: 50, dataCenterId: DC, type: 'STANDARD', tags: {}, createdAt: now, updatedAt: now });
  });
});
afterAll(async () => cp?.close());

const patch = (id: string, json: unknown, key = user.key) => call(cp, `/v2/pods/${id}`, { method: 'PATCH', json, key });
const get = async (id: string) => (await call(cp, `/v2/pods/${id}`, { key: user.key })).body;

async function pods() {
  return {
    plain: (await createPod(cp, gpuBody(), user.key)).body.id as string,
    persistent: (await createPod(cp, gpuBody({ mounts: { persistent: { size: 20, path: '/workspace' } } }), user.key)).body.id as string,
    network: (await createPod(cp, gpuBody({ mounts: { network: [{ volumeId: VOL, path: '/data' }] } }), user.key)).body.id as string,
    cpuNetwork: (await createPod(cp, cpuBody({ mounts: { network: [{ volumeId: VOL, path: '/data' }] } }), user.key)).body.id as string,
  };
}
let p: Awaited<ReturnType<typeof pods>>;
beforeAll(async () => {
  p = await pods();
});

/** the PATCH is answered `status` and the pod is exactly as before */
async function rejected(id: string, json: unknown, status: number, opts: Parameters<typeof expectProblem>[2] = {}) {
  const before = await get(id);
  const c = await patch(id, json);
  expectProblem(c, status, opts);
  if (status === 422) expectJsonPathErrors(c);
  expect(await get(id)).toEqual(before);
  return c;
}

describe('2.2 rule 4: mounts on PATCH', () => {
  test('omitting mounts or sending {} leaves the mount unchanged', async () => {
    for (const id of Object.values(p)) {
      const before = await get(id);
      const a = await patch(id, { args: 'x' });
      expect(a.status, a.text).toBe(200);
      expect(a.body.mounts).toEqual(before.mounts);
      const b = await patch(id, { mounts: {} });
      expect(b.status, b.text).toBe(200);
      expectPodView(b.body);
      expect(b.body.mounts).toEqual(before.mounts);
    }
  });

  test('an explicit network: [] → 400, whatever the pod has', async () => {
    for (const id of Object.values(p)) await rejected(id, { mounts: { network: [] } }, 400, { errorMatching: '$.mounts.network' });
  });

  test('introducing a mount kind not present at creation → 400', async () => {
    await rejected(p.network, { mounts: { persistent: { size: 20, path: '/w' } } }, 400, { errorMatching: '$.mounts.persistent' });
    await rejected(p.persistent, { mounts: { network: [{ volumeId: VOL, path: '/d' }] } }, 400, { errorMatching: '$.mounts.network' });
    await rejected(p.plain, { mounts: { persistent: { size: 20, path: '/w' } } }, 400, { errorMatching: '$.mounts.persistent' });
    await rejected(p.plain, { mounts: { network: [{ volumeId: VOL, path: '/d' }] } }, 400, { errorMatching: '$.mounts.network' });
    await rejected(p.cpuNetwork, { mounts: { persistent: { size: 20, path: '/w' } } }, 400);
  });

  test('the 400 rules come before the schema: an incomplete entry of a new kind is still 400', async () => {
    await rejected(p.network, { mounts: { persistent: { size: 20 } } }, 400);
    await rejected(p.plain, { mounts: { network: [{ path: '/d' }] } }, 400);
    await rejected(p.persistent, { disk: 0, mounts: { network: [{ volumeId: VOL, path: '/d' }] } }, 400);
  });

  test('both kinds at once → 400', async () => {
    await rejected(p.persistent, { mounts: { persistent: { size: 20, path: '/w' }, network: [{ volumeId: VOL, path: '/d' }] } }, 400);
  });

  test('naming a different volumeId → 400 (immutable)', async () => {
    await rejected(p.network, { mounts: { network: [{ volumeId: VOL2, path: '/data' }] } }, 400, { errorMatching: '$.mounts.network[0].volumeId' });
    await rejected(p.cpuNetwork, { mounts: { network: [{ volumeId: 'vol_nope', path: '/data' }] } }, 400);
  });

  test('every entry must be complete → 422', async () => {
    await rejected(p.persistent, { mounts: { persistent: { path: '/new' } } }, 422, { errorMatching: '$.mounts.persistent.size: is required' });
    await rejected(p.persistent, { mounts: { persistent: { size: 20 } } }, 422, { errorMatching: '$.mounts.persistent.path: is required' });
    await rejected(p.network, { mounts: { network: [{ path: '/new' }] } }, 422, { errorMatching: '$.mounts.network[0].volumeId: is required' });
    await rejected(p.network, { mounts: { network: [{ volumeId: VOL }] } }, 422, { errorMatching: '$.mounts.network[0].path: is required' });
  });

  test('persistent size minimum 10 and unknown mount fields → 422', async () => {
    await rejected(p.persistent, { mounts: { persistent: { size: 9, path: '/w' } } }, 422, { errorMatching: '$.mounts.persistent.size' });
    await rejected(p.network, { mounts: { network: [{ volumeId: VOL, path: '/d', readOnly: true }] } }, 422, {
      errorMatching: '$.mounts.network[0].readOnly: unknown property',
    });
  });

  test('paths may be changed: persistent, and network with the same volumeId (GPU and CPU pods)', async () => {
    const a = await patch(p.persistent, { mounts: { persistent: { size: 20, path: '/moved' } } });
    expect(a.status, a.text).toBe(200);
    expect(a.body.mounts).toEqual({ persistent: { size: 20, path: '/moved' } });
    const b = await patch(p.network, { mounts: { network: [{ volumeId: VOL, path: '/elsewhere' }] } });
    expect(b.status, b.text).toBe(200);
    expect(b.body.mounts).toEqual({ network: [{ volumeId: VOL, path: '/elsewhere' }] });
    const c = await patch(p.cpuNetwork, { mounts: { network: [{ volumeId: VOL, path: '/cpu/custom' }] } });
    expect(c.status, c.text).toBe(200);
    expect((await get(p.cpuNetwork)).mounts).toEqual({ network: [{ volumeId: VOL, path: '/cpu/custom' }] });
  });
});

describe('fields and limits on PATCH', () => {
  test('updatable fields change and the pod view stays complete', async () => {
    const id = (await createPod(cp, gpuBody(), user.key)).body.id;
    const name = uniqueName('renamed');
    const c = await patch(id, { name, image: 'alpine:3.20', args: 'sleep infinity', disk: 7, ports: ['8080/http', '2222/tcp'], env: { K: 'v' }, registry: null, tags: { team: 'ml' } });
    expect(c.status, c.text).toBe(200);
    expectPodView(c.body);
    expect(c.body).toMatchObject({ name, image: 'alpine:3.20', args: 'sleep infinity', disk: 7, ports: ['8080/http', '2222/tcp'], env: { K: 'v' }, registry: null });
    expect(await get(id)).toMatchObject({ name, disk: 7 });
  });

  test('limits of part 8 apply to PATCH → 422', async () => {
    await rejected(p.plain, { disk: 0 }, 422, { errorMatching: '$.disk' });
    await rejected(p.plain, { disk: 2.5 }, 422, { errorMatching: '$.disk' });
    await rejected(p.plain, { ports: ['8888'] }, 422, { errorMatching: '$.ports[0]' });
    await rejected(p.plain, { ports: ['70000/tcp'] }, 422, { errorMatching: '$.ports[0]' });
    await rejected(p.plain, { ports: ['22/tcp', '22/udp'] }, 422, { errorMatching: '$.ports[1]' });
  });

  test('unknown or non-updatable properties → 422', async () => {
    await rejected(p.plain, { bogus: 1 }, 422, { errorMatching: '$.bogus: unknown property' });
    await rejected(p.plain, { gpu: { id: 'x', count: 2 } }, 422, { errorMatching: '$.gpu.id: unknown property' });
    await rejected(p.plain, { status: 'RUNNING' }, 422, { errorMatching: '$.status: unknown property' });
    await rejected(p.plain, [], 422, { errorMatching: /^\$: / });
    await rejected(p.plain, { name: '' }, 422, { errorMatching: '$.name' });
  });

  test('a registry that does not exist → 422', async () => {
    await rejected(p.plain, { registry: 'reg_missing' }, 422, { errorMatching: '$.registry' });
  });

  test('renaming onto another live pod\'s name → 409; keeping its own name is fine', async () => {
    const a = await createPod(cp, gpuBody(), user.key);
    const b = await createPod(cp, gpuBody(), user.key);
    await rejected(b.body.id, { name: a.body.name }, 409, { errorMatching: '$.name' });
    const same = await patch(b.body.id, { name: b.body.name });
    expect(same.status).toBe(200);
  });

  test('invalid JSON → 400; mount conflict beats schema errors', async () => {
    const before = await get(p.plain);
    const c = await call(cp, `/v2/pods/${p.plain}`, { method: 'PATCH', key: user.key, headers: { 'content-type': 'application/json' }, body: '{"disk": ' });
    expectProblem(c, 400, { code: 'INVALID_JSON' });
    expect(await get(p.plain)).toEqual(before);
    await rejected(p.plain, { disk: 0, bogus: 1, mounts: { network: [] } }, 400);
  });

  test('locked: true removes stop from actions; false restores it', async () => {
    const id = (await createPod(cp, gpuBody(), user.key)).body.id;
    const l = await patch(id, { locked: true });
    expect(l.body.locked).toBe(true);
    expect(l.body.actions).toEqual(['terminate']);
    const u = await patch(id, { locked: false });
    expect(u.body.actions).toEqual(['stop', 'terminate']);
  });

  test('a terminated pod cannot be changed → 409', async () => {
    const id = (await createPod(cp, gpuBody(), user.key)).body.id;
    expect((await call(cp, `/v2/pods/${id}`, { method: 'DELETE', key: user.key })).status).toBe(204);
    await rejected(id, { args: 'x' }, 409);
  });

  test('unknown pod or another account\'s pod → 404', async () => {
    expectProblem(await patch('doesnotexist', { args: 'x' }), 404);
    const other = await cp.newAccount('read_write');
    const before = await get(p.plain);
    expectProblem(await patch(p.plain, { args: 'stolen' }, other.key), 404);
    expect(await get(p.plain)).toEqual(before);
  });
});

describe('decisions on PATCH', () => {
  test('a locked running pod refuses changes that would recreate its container (a reset), 409 LOCKED', async () => {
    const { startTestControlPlane } = await import('../harness/control-plane.ts');
    const { seedHosts } = await import('../harness/fake-hosts.ts');
    const cp = await startTestControlPlane();
    try {
      await seedHosts(cp.services.store, [{ gpus: 2 }]);
      const created = await cp.api('/v2/pods', { method: 'POST', json: { name: 'locked', image: 'a:1', locked: true, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
      const pod = (await created.json()) as { id: string };
      const res = await cp.api(`/v2/pods/${pod.id}`, { method: 'PATCH', json: { image: 'a:2' } });
      expect(res.status).toBe(409);
      expect(((await res.json()) as { code: string }).code).toBe('LOCKED');
      const renamed = await cp.api(`/v2/pods/${pod.id}`, { method: 'PATCH', json: { name: 'still-locked' } });
      expect(renamed.status).toBe(200);
      const unlockAndChange = await cp.api(`/v2/pods/${pod.id}`, { method: 'PATCH', json: { locked: false, image: 'a:2' } });
      expect(unlockAndChange.status).toBe(200);
      // Idempotency-Key: the same body with keys in another order is the same request
      const a = await cp.api('/v2/pods', { method: 'POST', headers: { 'idempotency-key': 'k-order' }, json: { name: 'o', image: 'b', gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
      const b = await cp.api('/v2/pods', { method: 'POST', headers: { 'idempotency-key': 'k-order' }, json: { gpu: { id: 'NVIDIA H100 80GB HBM3' }, image: 'b', name: 'o' } });
      expect(b.status).toBe(201);
      expect(((await b.json()) as { id: string }).id).toBe(((await a.json()) as { id: string }).id);
      // public routes under /v2 carry the rate-limit headers too
      const docs = await fetch(cp.url + '/v2/openapi.json');
      expect(docs.headers.get('ratelimit')).toMatch(/"minute";r=\d+;t=\d+/);
    } finally {
      await cp.close();
    }
  });
});
