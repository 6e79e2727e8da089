import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
await seedHosts(cp.services.store, Array.from({ length: 4 }, (_, i) => ({ id: `cpu-${i}`, gpus: 0, cpuCount: 1_000_000, memoryGb: 10_000_000, diskFreeGb: 100_000_000 })));
const { key } = await cp.newAccount('read_write');
const p = await cp.services.keys.authenticate(`Bearer ${key}`);
const ids: string[] = [];
for (let i = 0; i < 10000; i += 250) { const b = await Promise.all(Array.from({ length: 250 }, (_, j) => cp.services.pods.create(p, { name: `b-${i + j}`, image: 'busybox', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }))); for (const x of b) ids.push(x.pod.id); }
for (const kind of ['patch', 'stop', 'start'] as const) {
  const t = performance.now(); let next = 0; const N = 3000;
  await Promise.all(Array.from({ length: 32 }, async () => { while (next < N) { const id = ids[next++]!; if (kind === 'patch') await cp.services.pods.update(p, id, { args: `x${next}` }); else await cp.services.pods.act(p, id, { action: kind }); } }));
  console.log(kind, (N / ((performance.now() - t) / 1000)).toFixed(0), '/s');
}
await cp.close();
