// Store throughput through the API: mutations per second with 10,000 pods stored, fsync on.
// A control plane runs in this process (lowdb snapshot + journal with group commit, fdatasync per
// commit). 10,000 CPU pods are created through the pod service, then MUTATIONS mutations go through
// the HTTP API with IN_FLIGHT requests in flight: per pod a PATCH (container config change), a stop
// and a start (re-placement), each awaited before that pod's next one.
// Baseline in the same run: a naive store that keeps the same 10,000 pod records and, per mutation,
// serialises the whole state and writes it with writeFile + rename (one awaited write at a time).
// The HTTP client runs in a worker thread (bench/http-load.ts), so it does not share the server's
// event loop.
//   npx tsx bench/store.ts
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PodRecord } from '../model/pod.ts';
import { startProfile } from './profile.ts';
import { runLoad } from './http-load.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';

const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const MUTATIONS = Number(process.env.BENCH_MUTATIONS ?? 3_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const NAIVE_MUTATIONS = Number(process.env.BENCH_NAIVE_MUTATIONS ?? 50);
const TARGET = 1000;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-store-'));
  const cp = await startTestControlPlane({ dataDir, rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
  try {
    await seedHosts(
      cp.services.store,
      Array.from({ length: 4 }, (_, i) => ({ id: `cpu-${i}`, gpus: 0, cpuCount: 1_000_000, memoryGb: 10_000_000, diskFreeGb: 100_000_000 })),
    );
    const { accountId, key } = await cp.newAccount('read_write');
    const principal = await cp.services.keys.authenticate(`Bearer ${key}`);

    // 10,000 pods through the service (the same validation, placement and transaction as the API)
    let t = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < PODS; i += 250) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(250, PODS - i) }, (_, j) =>
          cp.services.pods.create(principal, { name: `bench-${i + j}`, image: 'busybox:1.36', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }),
        ),
      );
      for (const { pod } of batch) ids.push(pod.id);
    }
    const stored = await cp.services.store.count('pods', { accountId });
    if (stored !== PODS) throw new Error(`expected ${PODS} pods, have ${stored}`);
    console.error(`setup: ${PODS} pods created in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // warm the HTTP path (JIT, keep-alive connections), then the measured run: one lane per pod
    // (PATCH, stop, start, each awaited before the next), IN_FLIGHT lanes at a time
    const headers = { authorization: `Bearer ${key}` };
    let serial = 0;
    const lane = (id: string, ops: Op[]) =>
      ops.map((op) =>
        op === 'patch'
          ? { method: 'PATCH', path: `/v2/pods/${id}`, body: JSON.stringify({ args: `sleep ${++serial}`, env: { RUN: String(serial) } }), expect: 200 }
          : { method: 'POST', path: `/v2/pods/${id}/action`, body: JSON.stringify({ action: op }), expect: 200 },
      );
    await runLoad({ url: cp.url, headers, concurrency: IN_FLIGHT, lanes: ids.slice(0, 64).map((id) => lane(id, ['patch'])) });
    const lanes: ReturnType<typeof lane>[] = [];
    let n = 0;
    for (let i = 64; n < MUTATIONS; i++) {
      const ops = (['patch', 'stop', 'start'] as Op[]).slice(0, Math.min(3, MUTATIONS - n));
      lanes.push(lane(ids[i % ids.length]!, ops));
      n += ops.length;
    }
    const profile = await startProfile(process.env.BENCH_CPU_PROFILE);
    const elu0 = performance.eventLoopUtilization();
    const result = await runLoad({ url: cp.url, headers, concurrency: IN_FLIGHT, lanes });
    const elu = performance.eventLoopUtilization(elu0).utilization;
    await profile.stop();
    const { done, seconds, perSecond } = result;

    // naive baseline over the same records: whole-state JSON, writeFile + rename, per mutation
    const pods = await cp.services.store.list('pods', { accountId });
    const naivePerSecond = await naiveBaseline(dataDir, pods);

    console.log(
      `store: ${perSecond.toFixed(0)} mutations/s with ${PODS} pods (target ${TARGET}/s); ` +
        `naive full-rewrite baseline ${naivePerSecond.toFixed(1)}/s; ratio ${(perSecond / naivePerSecond).toFixed(1)}`,
    );
    console.error(
      `  ${done} mutations (PATCH, stop, start per pod) in ${seconds.toFixed(2)} s, ${IN_FLIGHT} in flight, fsync on, ` +
        `server event-loop utilisation ${elu.toFixed(2)}; ` +
        `latency p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms; naive: ${NAIVE_MUTATIONS} rewrites of ${PODS} pods`,
    );
    if (perSecond < TARGET) process.exitCode = 1;
  } finally {
    await cp.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

type Op = 'patch' | 'stop' | 'start';

async function naiveBaseline(dir: string, pods: PodRecord[]): Promise<number> {
  const file = path.join(dir, 'naive.json');
  const tmp = `${file}.tmp`;
  const state = new Map(pods.map((p) => [p.id, p]));
  const ids = [...state.keys()];
  const t = performance.now();
  for (let i = 0; i < NAIVE_MUTATIONS; i++) {
    const id = ids[i % ids.length]!;
    state.set(id, { ...state.get(id)!, args: `sleep ${i}`, updatedAt: new Date().toISOString() });
    await writeFile(tmp, JSON.stringify({ pods: Object.fromEntries(state) }));
    await rename(tmp, file);
  }
  return NAIVE_MUTATIONS / ((performance.now() - t) / 1000);
}

await main();
