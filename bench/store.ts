// Store throughput through the API: mutations per second with 10,000 pods stored, fsync on.
// A control plane runs in this process (lowdb snapshot + journal with group commit, fdatasync per
// commit). 10,000 CPU pods are created through the pod service, then MUTATIONS mutations go through
// the HTTP API with IN_FLIGHT requests in flight: per pod a PATCH (container config change), a stop
// and a start (re-placement), each awaited before that pod's next one.
// Baseline in the same run, through the same HTTP path: a second server with the same services over a
// naive store (bench/naive-store.ts) that starts from a copy of the same records (10,000 pods, the
// account, its key, the hosts) and, per committed transaction, serialises the whole state and rewrites
// one file (temp file, fdatasync, rename), one transaction at a time. The same lanes (PATCH, stop,
// start per pod) with the same IN_FLIGHT in flight; fewer of them, as the baseline is slow.
// The HTTP client runs in a worker thread (bench/http-load.ts), so it does not share the server's
// event loop. Floor: ≥ 1,000 mutations/s.
//   npx tsx bench/store.ts
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildServer, createServices } from '../api/index.ts';
import { COLLECTION_NAMES } from '../model/index.ts';
import { NaiveFileStore } from './naive-store.ts';
import { startProfile } from './profile.ts';
import { runLoad, type LoadRequest, type LoadResult } from './http-load.ts';
import { checkTarget } from './target.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';

const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const MUTATIONS = Number(process.env.BENCH_MUTATIONS ?? 3_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const NAIVE_MUTATIONS = Number(process.env.BENCH_NAIVE_MUTATIONS ?? IN_FLIGHT * 3);
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
    const t = performance.now();
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
    const lane = (id: string, ops: Op[]): LoadRequest[] =>
      ops.map((op) =>
        op === 'patch'
          ? { method: 'PATCH', path: `/v2/pods/${id}`, body: JSON.stringify({ args: `sleep ${++serial}`, env: { RUN: String(serial) } }), expect: 200 }
          : { method: 'POST', path: `/v2/pods/${id}/action`, body: JSON.stringify({ action: op }), expect: 200 },
      );
    /** lanes of PATCH, stop, start over the pods from `first` on, `mutations` requests in all */
    const lanesFor = (first: number, mutations: number): LoadRequest[][] => {
      const lanes: LoadRequest[][] = [];
      let n = 0;
      for (let i = first; n < mutations; i++) {
        const ops = (['patch', 'stop', 'start'] as Op[]).slice(0, Math.min(3, mutations - n));
        lanes.push(lane(ids[i % ids.length]!, ops));
        n += ops.length;
      }
      return lanes;
    };
    const WARM = 64;
    await runLoad({ url: cp.url, headers, concurrency: IN_FLIGHT, lanes: ids.slice(0, WARM).map((id) => lane(id, ['patch'])) });
    // the baseline starts from these very records (copied before the measured run changes them)
    const initial: Record<string, readonly object[]> = {};
    for (const c of COLLECTION_NAMES) initial[c] = await cp.services.store.list(c);

    const profile = await startProfile(process.env.BENCH_CPU_PROFILE);
    const elu0 = performance.eventLoopUtilization();
    const result = await runLoad({ url: cp.url, headers, concurrency: IN_FLIGHT, lanes: lanesFor(WARM, MUTATIONS) });
    const elu = performance.eventLoopUtilization(elu0).utilization;
    await profile.stop();
    const { done, seconds, perSecond } = result;

    const naive = await naiveBaseline(
      dataDir,
      cp.services.config,
      initial,
      (url) => runLoad({ url, headers, concurrency: IN_FLIGHT, lanes: ids.slice(0, IN_FLIGHT).map((id) => lane(id, ['patch'])) }),
      (url) => runLoad({ url, headers, concurrency: IN_FLIGHT, lanes: lanesFor(WARM, NAIVE_MUTATIONS) }),
    );

    console.log(
      `store: ${perSecond.toFixed(0)} mutations/s with ${PODS} pods; ` +
        `naive full-rewrite store through the same HTTP path ${naive.result.perSecond.toFixed(1)}/s; ratio ${(perSecond / naive.result.perSecond).toFixed(1)}`,
    );
    console.error(
      `  ${done} mutations (PATCH, stop, start per pod) in ${seconds.toFixed(2)} s, ${IN_FLIGHT} in flight, fsync on, ` +
        `server event-loop utilisation ${elu.toFixed(2)}; latency p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms; ` +
        `naive: ${naive.result.done} mutations in ${naive.result.seconds.toFixed(2)} s, ${IN_FLIGHT} in flight, ${naive.writes} full rewrites ` +
        `(${(naive.bytes / 1e6).toFixed(1)} MB each), p50 ${naive.result.p50.toFixed(0)} ms`,
    );
    checkTarget({ name: `store mutations/s through the API at ${PODS} pods`, value: perSecond, op: '>=', floor: TARGET, unit: '/s', digits: 0 });
  } finally {
    await cp.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

type Op = 'patch' | 'stop' | 'start';

/** The same services and HTTP server over a NaiveFileStore holding `initial`: `warm`, then `measure` against its URL. */
async function naiveBaseline(
  dir: string,
  config: Parameters<typeof createServices>[0],
  initial: Record<string, readonly object[]>,
  warm: (url: string) => Promise<LoadResult>,
  measure: (url: string) => Promise<LoadResult>,
): Promise<{ result: LoadResult; writes: number; bytes: number }> {
  const naiveDir = path.join(dir, 'naive');
  await mkdir(naiveDir, { recursive: true });
  const file = path.join(naiveDir, 'state.json');
  const store = new NaiveFileStore(file, initial);
  const services = await createServices({ ...config, dataDir: naiveDir }, store);
  const app = await buildServer({ services, logger: false });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    await warm(url);
    const before = store.writes;
    const result = await measure(url);
    return { result, writes: store.writes - before, bytes: (await stat(file)).size };
  } finally {
    await app.close();
    await store.close();
  }
}

await main();
