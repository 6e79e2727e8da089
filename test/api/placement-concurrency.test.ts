// Never one GPU to two pods, also when creates and starts race: 24 concurrent 1-GPU creates on two
// 8-GPU hosts place exactly 16, each on distinct GPUs; the rest fail clearly.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8 }, { gpus: 8 }]);
});
afterAll(async () => cp?.close());

test('concurrent creates never share a GPU and fail with CAPACITY_UNAVAILABLE once the fleet is full', async () => {
  const results = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      cp.api('/v2/pods', { method: 'POST', json: { name: `race-${i}`, image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> })),
    ),
  );
  const placed = results.filter((r) => r.status === 201);
  const refused = results.filter((r) => r.status !== 201);
  expect(placed).toHaveLength(16);
  expect(refused.map((r) => r.body.code)).toEqual(Array(8).fill('CAPACITY_UNAVAILABLE'));
  const pods = await cp.services.store.list('pods');
  const uuids = pods.flatMap((p) => p.gpuUuids);
  expect(uuids).toHaveLength(16);
  expect(new Set(uuids).size).toBe(16);

  // stop four and race eight starts for the freed GPUs: four win
  const stopped = pods.slice(0, 8);
  await Promise.all(stopped.slice(0, 4).map((p) => cp.api(`/v2/pods/${p.id}/action`, { method: 'POST', json: { action: 'stop' } })));
  const raced = await Promise.all(
    Array.from({ length: 8 }, (_, i) => cp.api('/v2/pods', { method: 'POST', json: { name: `late-${i}`, image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } })),
  );
  expect(raced.filter((r) => r.status === 201)).toHaveLength(4);
  const live = (await cp.services.store.list('pods')).filter((p) => p.allocated).flatMap((p) => p.gpuUuids);
  expect(live).toHaveLength(16);
  expect(new Set(live).size).toBe(16);
});

test('vCPUs a GPU pod reserved (GraphQL minVcpuCount) stay reserved: a CPU pod cannot take them, also after a stop and start', async () => {
  const own = await startTestControlPlane();
  try {
    await seedHosts(own.services.store, [{ gpus: 2, cpuCount: 16, memoryGb: 64, dataCenterId: 'dc-res' }]);
    const gql = await own.api('/graphql', {
      method: 'POST',
      json: { query: 'mutation { podFindAndDeployOnDemand(input: {name: "g", imageName: "img", gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCount: 1, minVcpuCount: 12, minMemoryInGb: 8, containerDiskInGb: 1, cloudType: ALL}) { id } }' },
    });
    const body = (await gql.json()) as { data?: { podFindAndDeployOnDemand: { id: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const gpuPodId = body.data!.podFindAndDeployOnDemand.id;
    const cpuPod = () => own.api('/v2/pods', { method: 'POST', json: { name: `c-${Math.random()}`, image: 'img', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 8, memory: 4 } } });
    const refused = await cpuPod();
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe('CAPACITY_UNAVAILABLE');
    await own.api(`/v2/pods/${gpuPodId}/action`, { method: 'POST', json: { action: 'stop' } });
    await own.api(`/v2/pods/${gpuPodId}/action`, { method: 'POST', json: { action: 'start' } });
    expect((await cpuPod()).status).toBe(400);
    await own.api(`/v2/pods/${gpuPodId}`, { method: 'DELETE' });
    expect((await cpuPod()).status).toBe(201);
  } finally {
    await own.close();
  }
});
