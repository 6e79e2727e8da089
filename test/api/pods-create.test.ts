// POST /v2/pods: the Pod view (2.1), the mount rules (2.2), the limits (part 8), ports, the
// validation order (invalid JSON 400 → mount conflicts 400 → schema 422 → field rules 422 →
// placement 400), name uniqueness, global networking and Idempotency-Key.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import {
  A100,
  call,
  cpuBody,
  createPod,
  DC,
  DC2,
  expectJsonPathErrors,
  expectPodView,
  expectProblem,
  gpuBody,
  H100,
  RTX4090,
  snapshotPods,
  startPodsControlPlane,
  uniqueName,
} from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
const volumes = { dc1: 'vol_create_dc1', dc2: 'vol_create_dc2', other: 'vol_create_other' };

beforeAll(async () => {
  cp = await startPodsControlPlane();
  // one A100 in its own data center: the second A100 pod finds the capacity taken
  await seedHosts(cp.services.store, [{ id: 'a100-one', gpus: 1, gpuName: A100, gpuTypeId: A100, dataCenterId: 'dc-a100', diskFreeGb: 100_000 }]);
  user = await cp.newAccount('read_write');
  const other = await cp.newAccount('read_write');
  const now = new Date().toISOString();
  await cp.services.store.transact((tx) => {
    const vol = (id: string, accountId: string, dataCenterId: string) =>
      tx.put('networkVolumes', { id, accountId, name: id, size: 50, dataCenterId, type: 'STANDARD', tags: {}, createdAt: now, updatedAt: now });
    vol(volumes.dc1, user.accountId, DC);
    vol(volumes.dc2, user.accountId, DC2);
    vol(volumes.other, other.accountId, DC);
  });
});
afterAll(async () => cp?.close());

const post = (json: unknown, init: { key?: string; headers?: Record<string, string> } = {}) =>
  call(cp, '/v2/pods', { method: 'POST', json, key: init.key ?? user.key, ...(init.headers ? { headers: init.headers } : {}) });

/** a rejected create leaves the account's pods exactly as they were */
async function rejected(json: unknown, status: number, opts: Parameters<typeof expectProblem>[2] = {}) {
  const before = await snapshotPods(cp, user.key);
  const c = await post(json);
  expectProblem(c, status, opts);
  if (status === 422) expectJsonPathErrors(c);
  expect(await snapshotPods(cp, user.key)).toBe(before);
  return c;
}

describe('2.1 the created pod', () => {
  test('a GPU pod with every field of 2.1, defaults applied', async () => {
    const name = uniqueName('full');
    const { body: pod, res } = await createPod(cp, { name, image: 'busybox:1.36', gpu: { id: H100 } }, user.key);
    expect(res.status).toBe(201);
    expect(pod).toMatchObject({
      name,
      status: 'PROVISIONING',
      actions: ['stop', 'terminate'],
      image: 'busybox:1.36',
      args: '',
      ports: [],
      env: {},
      registry: null,
      mounts: {},
      gpu: { id: H100, count: 1 },
      cloud: 'SECURE',
      template: null,
      locked: false,
      globalNetworking: { enabled: false },
      runtime: null,
      startedAt: null,
    });
    expect(pod.cpu).toBeUndefined();
    expect(pod.disk).toBeGreaterThanOrEqual(1);
    expect(pod.dataCenterId).toMatch(/^dc-test-/);
    expect(pod.cost).toBeGreaterThan(0);
    expect(Date.parse(pod.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    // the provisioner is not running: the pod says what it waits for
    expect(pod.statusReason).toMatch(/provisioner/);
    const got = await call(cp, `/v2/pods/${pod.id}`, { key: user.key });
    expect(got.status).toBe(200);
    expectPodView(got.body);
    expect(got.body).toEqual({ ...pod, runtime: null });
  });

  test('a CPU pod has cpu and no gpu', async () => {
    const { body: pod } = await createPod(cp, cpuBody({ ports: ['22/tcp', '8888/http', '53/udp'], env: { A: '1', B_2: 'x' }, args: 'sleep 1' }), user.key);
    expect(pod.cpu).toEqual({ id: 'cpu3c', vcpuCount: 2, memory: 4 });
    expect(pod.gpu).toBeUndefined();
    expect(pod.ports).toEqual(['22/tcp', '8888/http', '53/udp']);
    expect(pod.env).toEqual({ A: '1', B_2: 'x' });
    expect(pod.args).toBe('sleep 1');
  });

  test('cloud COMMUNITY is honoured only where a COMMUNITY host exists', async () => {
    const c = await post(gpuBody({ cloud: 'COMMUNITY' }));
    expectProblem(c, 400, { code: 'PLACEMENT_IMPOSSIBLE' });
  });
});

describe('2.2 mounts on create', () => {
  test('persistent and network together → 400, even when an entry is also incomplete', async () => {
    await rejected(gpuBody({ mounts: { persistent: { size: 20, path: '/workspace' }, network: [{ volumeId: volumes.dc1, path: '/data' }] } }), 400, {
      errorMatching: '$.mounts',
    });
    await rejected(gpuBody({ mounts: { persistent: { size: 20 }, network: [{ path: '/data' }] } }), 400);
  });

  test('network: [] → 400', async () => {
    await rejected(gpuBody({ mounts: { network: [] } }), 400, { errorMatching: '$.mounts.network' });
  });

  test('more than one network mount → 422 (maxItems 1)', async () => {
    await rejected(
      gpuBody({ mounts: { network: [{ volumeId: volumes.dc1, path: '/a' }, { volumeId: volumes.dc1, path: '/b' }] } }),
      422,
      { errorMatching: '$.mounts.network' },
    );
  });

  test('incomplete entries → 422 naming the missing field', async () => {
    await rejected(gpuBody({ mounts: { persistent: { size: 20 } } }), 422, { errorMatching: '$.mounts.persistent.path: is required' });
    await rejected(gpuBody({ mounts: { persistent: { path: '/w' } } }), 422, { errorMatching: '$.mounts.persistent.size: is required' });
    await rejected(gpuBody({ mounts: { network: [{ path: '/d' }] } }), 422, { errorMatching: '$.mounts.network[0].volumeId: is required' });
    await rejected(gpuBody({ mounts: { network: [{ volumeId: volumes.dc1 }] } }), 422, { errorMatching: '$.mounts.network[0].path: is required' });
  });

  test('persistent size minimum 10', async () => {
    await rejected(gpuBody({ mounts: { persistent: { size: 9, path: '/w' } } }), 422, { errorMatching: '$.mounts.persistent.size' });
    await rejected(gpuBody({ mounts: { persistent: { size: 10.5, path: '/w' } } }), 422, { errorMatching: '$.mounts.persistent.size' });
    const { body } = await createPod(cp, gpuBody({ mounts: { persistent: { size: 10, path: '/workspace' } } }), user.key);
    expect(body.mounts).toEqual({ persistent: { size: 10, path: '/workspace' } });
  });

  test('unknown mount kind or field → 422', async () => {
    await rejected(gpuBody({ mounts: { nfs: { path: '/x' } } }), 422, { errorMatching: '$.mounts.nfs: unknown property' });
    await rejected(gpuBody({ mounts: { persistent: { size: 20, path: '/w', mode: 'rw' } } }), 422, {
      errorMatching: '$.mounts.persistent.mode: unknown property',
    });
    await rejected(gpuBody({ mounts: [] }), 422, { errorMatching: '$.mounts' });
  });

  test('persistent mounts are not allowed on CPU pods → 400, in the documented place of the order', async () => {
    // docs/validation.md: a cross-resource rule, after the schema and the field rules, before placement
    await rejected(cpuBody({ mounts: { persistent: { size: 20, path: '/w' } } }), 400, { errorMatching: '$.mounts.persistent' });
    await rejected(cpuBody({ disk: 0, mounts: { persistent: { size: 20, path: '/w' } } }), 422, { errorMatching: '$.disk' });
    await rejected(cpuBody({ cpu: { id: 'nope', vcpuCount: 2, memory: 1 }, mounts: { persistent: { size: 20, path: '/w' } } }), 422, { errorMatching: '$.cpu.id' });
    await rejected(cpuBody({ registry: 'reg_missing', mounts: { persistent: { size: 20, path: '/w' } } }), 422, { errorMatching: '$.registry' });
    const c = await rejected(cpuBody({ dataCenterIds: ['dc-nowhere'], mounts: { persistent: { size: 20, path: '/w' } } }), 400, { errorMatching: '$.mounts.persistent' });
    expect(c.body.code).not.toBe('PLACEMENT_IMPOSSIBLE');
  });

  test('a network volume must exist in the caller\'s account → 422', async () => {
    await rejected(gpuBody({ mounts: { network: [{ volumeId: 'vol_missing', path: '/d' }] } }), 422, {
      errorMatching: '$.mounts.network[0].volumeId',
    });
    await rejected(gpuBody({ mounts: { network: [{ volumeId: volumes.other, path: '/d' }] } }), 422, {
      errorMatching: '$.mounts.network[0].volumeId',
    });
  });

  test('the pod runs in its network volume\'s data center, custom paths honoured on GPU and CPU pods', async () => {
    const g = await createPod(cp, gpuBody({ mounts: { network: [{ volumeId: volumes.dc2, path: '/my/data' }] } }), user.key);
    expect(g.body.dataCenterId).toBe(DC2);
    expect(g.body.mounts).toEqual({ network: [{ volumeId: volumes.dc2, path: '/my/data' }] });
    const c = await createPod(cp, cpuBody({ mounts: { network: [{ volumeId: volumes.dc2, path: '/srv/cpu-data' }] } }), user.key);
    expect(c.body.dataCenterId).toBe(DC2);
    expect(c.body.mounts.network[0].path).toBe('/srv/cpu-data');
  });

  test('a network volume outside the requested data centers → 400, after the field rules', async () => {
    await rejected(gpuBody({ dataCenterIds: [DC], mounts: { network: [{ volumeId: volumes.dc2, path: '/d' }] } }), 400, {
      errorMatching: '$.mounts.network[0].volumeId',
    });
    await rejected(gpuBody({ registry: 'reg_missing', dataCenterIds: [DC], mounts: { network: [{ volumeId: volumes.dc2, path: '/d' }] } }), 422, {
      errorMatching: '$.registry',
    });
  });
});

describe('part 8 limits', () => {
  test('disk: integer, minimum 1', async () => {
    for (const disk of [0, -1, 1.5, '5', null]) await rejected(gpuBody({ disk }), 422, { errorMatching: '$.disk' });
    expect((await createPod(cp, gpuBody({ disk: 1 }), user.key)).body.disk).toBe(1);
  });

  test('gpu.count: integer, minimum 1, default 1', async () => {
    for (const count of [0, -2, 1.5, '2']) await rejected(gpuBody({ gpu: { id: H100, count } }), 422, { errorMatching: '$.gpu.count' });
    expect((await createPod(cp, gpuBody({ gpu: { id: H100 } }), user.key)).body.gpu).toEqual({ id: H100, count: 1 });
    expect((await createPod(cp, gpuBody({ gpu: { id: H100, count: 2 } }), user.key)).body.gpu).toEqual({ id: H100, count: 2 });
  });

  test('gpu.id required, known to the catalog', async () => {
    await rejected(gpuBody({ gpu: { count: 1 } }), 422, { errorMatching: '$.gpu.id: is required' });
    await rejected(gpuBody({ gpu: { id: 'NVIDIA Imaginary 9000' } }), 422, { errorMatching: '$.gpu.id' });
  });

  test('cpu: id, vcpuCount and memory required', async () => {
    await rejected(cpuBody({ cpu: { vcpuCount: 2, memory: 4 } }), 422, { errorMatching: '$.cpu.id: is required' });
    await rejected(cpuBody({ cpu: { id: 'cpu3c', memory: 4 } }), 422, { errorMatching: '$.cpu.vcpuCount: is required' });
    await rejected(cpuBody({ cpu: { id: 'cpu3c', vcpuCount: 2 } }), 422, { errorMatching: '$.cpu.memory: is required' });
    await rejected(cpuBody({ cpu: { id: '', vcpuCount: 2, memory: 4 } }), 422, { errorMatching: '$.cpu.id' });
    await rejected(cpuBody({ cpu: { id: 'cpu-unknown', vcpuCount: 2, memory: 4 } }), 422, { errorMatching: '$.cpu.id' });
  });

  test('vcpuCount: minimum 2, a power of two', async () => {
    for (const vcpuCount of [0, 1, 3, 6, 12, 2.5]) await rejected(cpuBody({ cpu: { id: 'cpu3c', vcpuCount, memory: 1 } }), 422, { errorMatching: '$.cpu.vcpuCount' });
  });

  test('vcpuCount valid for the flavor, as GET /v2/catalog/cpus lists them', async () => {
    const cat = await call(cp, '/v2/catalog/cpus', { key: user.key });
    expect(cat.status).toBe(200);
    const flavors = cat.body.cpus as { id: string; vcpuCounts: number[]; memoryPerVcpuGb: number }[];
    expect(flavors.length).toBeGreaterThan(0);
    for (const f of flavors) {
      for (const n of f.vcpuCounts) {
        expect(Math.log2(n) % 1, `${f.id} offers ${n}`).toBe(0);
        const c = await createPod(cp, cpuBody({ cpu: { id: f.id, vcpuCount: n, memory: 1 } }), user.key);
        expect(c.body.cpu).toEqual({ id: f.id, vcpuCount: n, memory: 1 });
      }
      // the next power of two above the largest offered is a power of two the flavor does not offer
      const beyond = Math.max(...f.vcpuCounts) * 2;
      await rejected(cpuBody({ cpu: { id: f.id, vcpuCount: beyond, memory: 1 } }), 422, { errorMatching: '$.cpu.vcpuCount' });
    }
  });

  test('memory: integer, minimum 1 GB, within the flavor', async () => {
    for (const memory of [0, -4, 1.5, '4']) await rejected(cpuBody({ cpu: { id: 'cpu3c', vcpuCount: 2, memory } }), 422, { errorMatching: '$.cpu.memory' });
    expect((await createPod(cp, cpuBody({ cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } }), user.key)).body.cpu.memory).toBe(1);
    await rejected(cpuBody({ cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4096 } }), 422, { errorMatching: '$.cpu.memory' });
  });
});

describe('ports <port>/<protocol>', () => {
  test.each(['8888', '8888/', '/tcp', 'abc/tcp', '8888/TCP', '8888/sctp', '8888/tcp ', ' 22/tcp', '0/tcp', '65536/tcp', '99999/udp', 22])(
    '%j → 422',
    async (port) => {
      await rejected(gpuBody({ ports: [port] }), 422, { errorMatching: '$.ports[0]' });
    },
  );

  test('a port listed twice → 422; ports not an array → 422', async () => {
    await rejected(gpuBody({ ports: ['22/tcp', '22/udp'] }), 422, { errorMatching: '$.ports[1]' });
    await rejected(gpuBody({ ports: '22/tcp,8888/http' }), 422, { errorMatching: '$.ports' });
  });

  test('1 and 65535 are valid', async () => {
    const { body } = await createPod(cp, gpuBody({ ports: ['1/tcp', '65535/udp'] }), user.key);
    expect(body.ports).toEqual(['1/tcp', '65535/udp']);
  });
});

describe('schema and field rules → 422', () => {
  test('an unknown property → 422 naming it with a JSONPath', async () => {
    await rejected(gpuBody({ bogus: 1 }), 422, { errorMatching: '$.bogus: unknown property' });
    await rejected(gpuBody({ gpu: { id: H100, speed: 'fast' } }), 422, { errorMatching: '$.gpu.speed: unknown property' });
  });

  test('name required; image required; gpu xor cpu', async () => {
    const { name: _n, ...noName } = gpuBody();
    await rejected(noName, 422, { errorMatching: '$.name: is required' });
    const { image: _i, ...noImage } = gpuBody();
    await rejected(noImage, 422, { errorMatching: '$.image' });
    await rejected({ name: uniqueName(), image: 'busybox' }, 422, { errorMatching: /^\$/ });
    await rejected(gpuBody({ cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }), 422, { errorMatching: /^\$/ });
  });

  test('wrong JSON types at the top level → 422', async () => {
    for (const body of [[], 'pod', 42, null, true]) await rejected(body, 422, { errorMatching: /^\$: / });
  });

  test('env names and values', async () => {
    await rejected(gpuBody({ env: { '1BAD': 'x' } }), 422, { errorMatching: '$.env' });
    await rejected(gpuBody({ env: { GOOD: 1 } }), 422, { errorMatching: '$.env.GOOD' });
    await rejected(gpuBody({ env: ['A=1'] }), 422, { errorMatching: '$.env' });
  });

  test('every failure is listed, not only the first', async () => {
    const c = await rejected(gpuBody({ disk: 0, locked: 'yes', bogus: true }), 422);
    const errs = c.body.errors as string[];
    expect(errs.some((e) => e.startsWith('$.disk'))).toBe(true);
    expect(errs.some((e) => e.startsWith('$.locked'))).toBe(true);
    expect(errs.some((e) => e.startsWith('$.bogus'))).toBe(true);
  });
});

describe('validation order', () => {
  test('invalid JSON → 400 before anything else', async () => {
    const before = await snapshotPods(cp, user.key);
    for (const text of ['{', '{"name": "x",}', "{'name': 'x'}", 'nul']) {
      const c = await call(cp, '/v2/pods', { method: 'POST', key: user.key, headers: { 'content-type': 'application/json' }, body: text });
      expectProblem(c, 400, { code: 'INVALID_JSON' });
    }
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('mount conflict (400) beats schema errors (422)', async () => {
    await rejected(
      gpuBody({ disk: -1, bogus: 1, mounts: { persistent: { size: 1, path: '/w' }, network: [{ volumeId: volumes.dc1, path: '/d' }] } }),
      400,
    );
    await rejected(gpuBody({ disk: -1, mounts: { network: [] } }), 400);
  });

  test('schema (422) beats field rules and placement', async () => {
    // 16 H100 on 8-GPU hosts could never be placed, but the body is invalid first
    await rejected(gpuBody({ gpu: { id: H100, count: 16 }, disk: 0 }), 422, { errorMatching: '$.disk' });
    await rejected(gpuBody({ gpu: { id: 'NVIDIA Imaginary', count: 16 } }), 422, { errorMatching: '$.gpu.id' });
  });

  test('field rules (422) beat placement', async () => {
    await rejected(gpuBody({ gpu: { id: H100, count: 16 }, ports: ['70000/tcp'] }), 422, { errorMatching: '$.ports[0]' });
    await rejected(cpuBody({ cpu: { id: 'cpu3c', vcpuCount: 64, memory: 1 } }), 422, { errorMatching: '$.cpu.vcpuCount' });
  });

  test('placement: impossible anywhere → 400 PLACEMENT_IMPOSSIBLE', async () => {
    await rejected(gpuBody({ gpu: { id: H100, count: 16 } }), 400, { code: 'PLACEMENT_IMPOSSIBLE' });
    await rejected(gpuBody({ gpu: { id: RTX4090 } }), 400, { code: 'PLACEMENT_IMPOSSIBLE' });
    await rejected(gpuBody({ dataCenterIds: ['dc-nowhere'] }), 400, { code: 'PLACEMENT_IMPOSSIBLE' });
  });

  test('placement: fits, but the capacity is taken → 400 CAPACITY_UNAVAILABLE', async () => {
    const first = await createPod(cp, gpuBody({ gpu: { id: A100 } }), user.key);
    expect(first.body.dataCenterId).toBe('dc-a100');
    await rejected(gpuBody({ gpu: { id: A100 } }), 400, { code: 'CAPACITY_UNAVAILABLE' });
    // stopping releases the GPU: the next create fits again
    const stop = await call(cp, `/v2/pods/${first.body.id}/action`, { method: 'POST', key: user.key, json: { action: 'stop' } });
    expect(stop.status).toBe(200);
    const second = await createPod(cp, gpuBody({ gpu: { id: A100 } }), user.key);
    // and the stopped pod cannot start again while the other holds the GPU
    const start = await call(cp, `/v2/pods/${first.body.id}/action`, { method: 'POST', key: user.key, json: { action: 'start' } });
    expectProblem(start, 400, { code: 'CAPACITY_UNAVAILABLE' });
    const still = await call(cp, `/v2/pods/${first.body.id}`, { key: user.key });
    expect(still.body.status).toBe('EXITED');
    await call(cp, `/v2/pods/${second.body.id}`, { method: 'DELETE', key: user.key });
  });
});

describe('request rules → 400 and 409', () => {
  test('globalNetworking: field rules come first (422); false is accepted and shows {enabled: false}', async () => {
    // the cross-resource rule (global networking, placement) comes after the schema and field rules
    await rejected(gpuBody({ globalNetworking: true, disk: 0 }), 422, { errorMatching: '$.disk' });
    await rejected(gpuBody({ globalNetworking: true, ports: ['70000/tcp'] }), 422, { errorMatching: '$.ports[0]' });
    const { body } = await createPod(cp, gpuBody({ globalNetworking: false }), user.key);
    expect(body.globalNetworking).toEqual({ enabled: false });
  });

  test('names are unique per account among pods that are not terminated (409)', async () => {
    const name = uniqueName('dup');
    const first = await createPod(cp, gpuBody({ name }), user.key);
    await rejected(gpuBody({ name }), 409, { errorMatching: '$.name' });
    await rejected(cpuBody({ name }), 409);
    // another account may use the name
    const other = await cp.newAccount('read_write');
    await createPod(cp, gpuBody({ name }), other.key);
    // once terminated the name is free again
    const del = await call(cp, `/v2/pods/${first.body.id}`, { method: 'DELETE', key: user.key });
    expect(del.status).toBe(204);
    const again = await createPod(cp, gpuBody({ name }), user.key);
    expect(again.body.id).not.toBe(first.body.id);
  });

  test('concurrent creates with one name: exactly one wins', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(Array.from({ length: 10 }, () => post(gpuBody({ name }))));
    expect(results.filter((r) => r.status === 201).length).toBe(1);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 409);
  });
});

describe('Idempotency-Key', () => {
  test('the same key and body replays the first pod, once', async () => {
    const key = `idem-${uniqueName()}`;
    const body = gpuBody();
    const first = await post(body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.res.headers.get('idempotent-replayed')).toBeNull();
    const before = await snapshotPods(cp, user.key);
    const second = await post(body, { headers: { 'idempotency-key': key } });
    expect(second.status).toBe(201);
    expect(second.res.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expectPodView(second.body);
    expect(await snapshotPods(cp, user.key)).toBe(before);
    const named = await call(cp, `/v2/pods?name=${encodeURIComponent(body.name as string)}`, { key: user.key });
    expect(named.body.pods.length).toBe(1);
  });

  test('concurrent retries with one key create one pod', async () => {
    const key = `idem-${uniqueName()}`;
    const body = gpuBody();
    const results = await Promise.all(Array.from({ length: 8 }, () => post(body, { headers: { 'idempotency-key': key } })));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.res.headers.get('idempotent-replayed') === 'true').length).toBe(7);
  });

  test('the same key with a different body → 422', async () => {
    const key = `idem-${uniqueName()}`;
    expect((await post(gpuBody(), { headers: { 'idempotency-key': key } })).status).toBe(201);
    const before = await snapshotPods(cp, user.key);
    const c = await post(gpuBody(), { headers: { 'idempotency-key': key } });
    expectProblem(c, 422, { code: 'IDEMPOTENCY_MISMATCH' });
    expectJsonPathErrors(c);
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('keys are per account', async () => {
    const key = `idem-${uniqueName()}`;
    const other = await cp.newAccount('read_write');
    const a = await post(gpuBody(), { headers: { 'idempotency-key': key } });
    const b = await call(cp, '/v2/pods', { method: 'POST', json: gpuBody(), key: other.key, headers: { 'idempotency-key': key } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.res.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
  });

  test('a rejected request does not consume the key', async () => {
    const key = `idem-${uniqueName()}`;
    const body = gpuBody({ disk: 0 });
    expectProblem(await post(body, { headers: { 'idempotency-key': key } }), 422);
    const ok = await post({ ...body, disk: 5 }, { headers: { 'idempotency-key': key } });
    expect(ok.status).toBe(201);
  });

  test('an over-long key → 400', async () => {
    expectProblem(await post(gpuBody(), { headers: { 'idempotency-key': 'k'.repeat(256) } }), 400);
  });
});
