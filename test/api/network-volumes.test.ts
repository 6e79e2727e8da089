// Network volumes over a listening server: data centers must exist, volumes grow but never shrink,
// pods mounting one are placed in its data center (or refused when told to go elsewhere), and a volume
// in use cannot be deleted.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { DEFAULT_VOLUME_ROOT, volumeHostPath, volumeRoot } from '../../model/records/network-volume.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'host-a', gpus: 8, dataCenterId: 'dc-a' },
    { id: 'host-b', gpus: 8, dataCenterId: 'dc-b' },
  ]);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
});
afterAll(async () => cp?.close());

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: J }> {
  const res = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const volume = async (name: string, dc: string, size = 50) => {
  const r = await call(alice.key, 'POST', '/v2/network-volumes', { name, size, dataCenterId: dc });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; size: number; dataCenterId: string };
};

describe('create', () => {
  test('returns both the v1 and the v2 name of the data center; dataCenter is accepted', async () => {
    const r = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'v2-name', size: 10, dataCenter: 'dc-a' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'v2-name', size: 10, dataCenterId: 'dc-a', dataCenter: 'dc-a', type: 'STANDARD' });
  });

  test('an unknown data center is a 422 naming the known ones', async () => {
    const r = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'x', size: 10, dataCenterId: 'dc-nowhere' });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatch(/^\$\.dataCenterId: unknown data center "dc-nowhere".*dc-a, dc-b/);
  });

  test('schema failures are 422 with errors; an unoffered type is 400', async () => {
    const missing = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'x', size: 10 });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual(['$.dataCenterId: is required (or $.dataCenter)']);
    const bad = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'x', size: 0, dataCenterId: 'dc-a', color: 'red' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(expect.arrayContaining(['$.color: unknown property', '$.size: must be >= 1']));
    const conflict = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'x', size: 10, dataCenterId: 'dc-a', dataCenter: 'dc-b' });
    expect(conflict.status).toBe(422);
    const hp = await call(alice.key, 'POST', '/v2/network-volumes', { name: 'x', size: 10, dataCenterId: 'dc-a', type: 'HIGH_PERFORMANCE' });
    expect(hp.status).toBe(400);
  });
});

test('a volume grows (200) but does not shrink (400 VOLUME_SHRINK)', async () => {
  const v = await volume('grow', 'dc-a', 100);
  const grow = await call(alice.key, 'PATCH', `/v2/network-volumes/${v.id}`, { size: 150, name: 'grown' });
  expect(grow.status).toBe(200);
  expect(grow.body).toMatchObject({ size: 150, name: 'grown', dataCenterId: 'dc-a' });
  const shrink = await call(alice.key, 'PATCH', `/v2/network-volumes/${v.id}`, { size: 149 });
  expect(shrink.status).toBe(400);
  expect(shrink.body.code).toBe('VOLUME_SHRINK');
  expect((await call(alice.key, 'GET', `/v2/network-volumes/${v.id}`)).body.size).toBe(150);
  expect((await call(alice.key, 'PATCH', `/v2/network-volumes/${v.id}`, { dataCenterId: 'dc-b' })).status).toBe(422);
});

test('pods mounting a volume are placed in its data center, or refused when dataCenterIds excludes it', async () => {
  const inA = await volume('pin-a', 'dc-a');
  const inB = await volume('pin-b', 'dc-b');
  for (const v of [inA, inB]) {
    const pod = await call(alice.key, 'POST', '/v2/pods', { name: `on-${v.id}`, image: 'busybox', gpu: { id: H100 }, mounts: { network: [{ volumeId: v.id, path: '/workspace' }] } });
    expect(pod.status, JSON.stringify(pod.body)).toBe(201);
    expect(pod.body.dataCenterId).toBe(v.dataCenterId);
  }
  const refused = await call(alice.key, 'POST', '/v2/pods', {
    name: 'elsewhere',
    image: 'busybox',
    gpu: { id: H100 },
    dataCenterIds: ['dc-a'],
    mounts: { network: [{ volumeId: inB.id, path: '/workspace' }] },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.errors).toEqual(['$.mounts.network[0].volumeId: volume is in another data center']);
});

test('delete is refused while a pod that is not terminated mounts the volume', async () => {
  const v = await volume('busy', 'dc-b');
  const pod = await call(alice.key, 'POST', '/v2/pods', { name: 'mounter', image: 'busybox', gpu: { id: H100 }, mounts: { network: [{ volumeId: v.id, path: '/data' }] } });
  expect(pod.status).toBe(201);
  const busy = await call(alice.key, 'DELETE', `/v2/network-volumes/${v.id}`);
  expect(busy.status).toBe(409);
  expect(busy.body.code).toBe('IN_USE');
  await call(alice.key, 'POST', `/v2/pods/${pod.body.id}/action`, { action: 'stop' });
  expect((await call(alice.key, 'DELETE', `/v2/network-volumes/${v.id}`)).status).toBe(409);
  expect((await call(alice.key, 'DELETE', `/v2/pods/${pod.body.id}`)).status).toBe(204);
  expect((await call(alice.key, 'DELETE', `/v2/network-volumes/${v.id}`)).status).toBe(204);
  expect((await call(alice.key, 'GET', `/v2/network-volumes/${v.id}`)).status).toBe(404);
});

test('another account gets 404 and cannot mount the volume', async () => {
  const v = await volume('private', 'dc-a');
  expect((await call(bob.key, 'GET', `/v2/network-volumes/${v.id}`)).status).toBe(404);
  expect((await call(bob.key, 'PATCH', `/v2/network-volumes/${v.id}`, { size: 500 })).status).toBe(404);
  expect((await call(bob.key, 'DELETE', `/v2/network-volumes/${v.id}`)).status).toBe(404);
  const pod = await call(bob.key, 'POST', '/v2/pods', { name: 'thief', image: 'busybox', gpu: { id: H100 }, mounts: { network: [{ volumeId: v.id, path: '/x' }] } });
  expect(pod.status).toBe(422);
  const list = await call(bob.key, 'GET', '/v2/network-volumes');
  expect(list.status).toBe(200);
  expect(list.body.networkVolumes).toEqual([]);
  const mine = await call(alice.key, 'GET', '/v2/network-volumes?dataCenterId=dc-a');
  expect(mine.body.networkVolumes.map((x: J) => x.id)).toContain(v.id);
  expect(mine.body.networkVolumes.every((x: J) => x.dataCenterId === 'dc-a')).toBe(true);
});

test('volumeHostPath puts a volume under GPUFLEET_VOLUME_ROOT and rejects unsafe ids', () => {
  expect(volumeRoot({})).toBe(DEFAULT_VOLUME_ROOT);
  expect(volumeHostPath('vol_abc', volumeRoot({}))).toBe('/var/lib/gpufleet/volumes/vol_abc');
  expect(volumeHostPath('vol_abc', volumeRoot({ GPUFLEET_VOLUME_ROOT: '/mnt/nfs/gpufleet/' }))).toBe('/mnt/nfs/gpufleet/vol_abc');
  expect(() => volumeRoot({ GPUFLEET_VOLUME_ROOT: 'relative/path' })).toThrow(/absolute/);
  expect(() => volumeHostPath('../etc')).toThrow(/unsafe/);
  expect(() => volumeHostPath('a/b')).toThrow(/unsafe/);
});
