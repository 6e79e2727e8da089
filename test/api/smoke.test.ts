import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8 }, { gpus: 0, id: 'cpu-host' }]);
});
afterAll(async () => cp?.close());

test('a GPU pod is placed, stopped, started and terminated', async () => {
  const res = await cp.api('/v2/pods', { method: 'POST', json: { name: 'p1', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 } } });
  const pod = (await res.json()) as { id: string; status: string; cost: number };
  expect(res.status, JSON.stringify(pod)).toBe(201);
  expect(pod.status).toBe('PROVISIONING');
  expect(pod.cost).toBeGreaterThan(0);
  const stop = await cp.api(`/v2/pods/${pod.id}/action`, { method: 'POST', json: { action: 'stop' } });
  expect(((await stop.json()) as { status: string }).status).toBe('EXITED');
  const start = await cp.api(`/v2/pods/${pod.id}/action`, { method: 'POST', json: { action: 'start' } });
  expect(((await start.json()) as { status: string }).status).toBe('PROVISIONING');
  const term = await cp.api(`/v2/pods/${pod.id}/action`, { method: 'POST', json: { action: 'terminate' } });
  expect(term.status).toBe(204);
  const cpu = await cp.api('/v2/pods', { method: 'POST', json: { name: 'c1', image: 'busybox', cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } } });
  expect(cpu.status, await cpu.clone().text()).toBe(201);
});
