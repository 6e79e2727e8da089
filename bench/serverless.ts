// Serverless queue endpoints over HTTP (the job interface and the worker protocol of a real control
// plane in this process, the job queue with fsync on), issue 10 "Performance":
// 1. Dispatch: a worker is parked in job-take (the queue's depth says it waits) when `run` is sent;
//    the time from sending `run` to the worker's job-take answer carrying the job. Baseline, sample by
//    sample in the same loop: one bare HTTP round trip (GET on a bare Fastify route, same client).
//    Added latency = dispatch − bare; floors p50 ≤ 2 ms, p99 ≤ 10 ms. The dispatch includes the
//    job's durable write (enqueue and take records, one fdatasync), which the bare round trip has not.
// 2. Throughput: JOBS jobs from `run` to `job-done`, IN_FLIGHT client lanes sending `run` and
//    WORKERS workers of the TypeScript worker SDK (worker/, in this process, over HTTP, concurrency
//    1), counted when the queue reports each job final. Baseline in the same run: a bare Fastify
//    route's requests/s with the same client and lanes. ROUNDS rounds alternate the order; the ratio
//    is the median of the pairs. A job needs three requests (run, take, done), so 0.33 is the
//    ceiling; floor ≥ 0.15.
//   npx tsx bench/serverless.ts
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { StoreWorkerDirectory } from '../test/api/jobs/store-worker-directory.ts';
import { workerEnv } from '../test/api/jobs/in-process-workers.ts';
import { startWorker, type WorkerHandle } from '../worker/index.ts';
import { startProfile } from './profile.ts';
import { checkTarget } from './target.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1500);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 10);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.BENCH_DISPATCH_SAMPLES ?? 300);
const INPUT = { prompt: 'a photo of an astronaut riding a horse on the moon, 4k, detailed', steps: 30, seed: 42 };
const OUTPUT = { image_url: 'https://example.invalid/results/0f8a1c7e-3b8f-4c55-9a8b-5b3e0e6c9d11.png', seed: 42 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = { debug: () => undefined, info: () => undefined, error: () => undefined };

async function main(): Promise<void> {
  const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
  const bare = Fastify({ logger: false });
  const workers: WorkerHandle[] = [];
  try {
    const directory = new StoreWorkerDirectory(cp.services.store);
    cp.services.workerPorts.register(directory);
    const user = await cp.newAccount('read_write', 1_000_000);
    const tpl = await cp.api('/v2/templates', { method: 'POST', key: user.key, json: { name: 'bench', image: 'busybox', serverless: true } });
    const templateId = ((await tpl.json()) as { id: string }).id;
    const newEndpoint = async () => {
      const res = await cp.api('/v1/endpoints', { method: 'POST', key: user.key, json: { templateId, gpuTypeIds: ['ADA_24'], workersMin: 0, workersMax: 0 } });
      if (res.status !== 200) throw new Error(`endpoint: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };

    bare.get('/bare', async () => ({ id: 'sync-0f8a1c7e', status: 'IN_QUEUE' }));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const addr = bare.server.address();
    const bareUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/bare`;
    const auth = { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' };
    const runBody = JSON.stringify({ input: INPUT });

    // 1. dispatch
    const epD = await newEndpoint();
    const { workerId, token } = await directory.issue(epD);
    const takeUrl = `${cp.url}/v2/${epD}/job-take/${workerId}?gpu=bench&job_in_progress=0`;
    const added: number[] = [];
    const dispatch: number[] = [];
    const bareRt: number[] = [];
    const syncOnly: number[] = [];
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-sls-'));
    const fh = await open(path.join(scratch, 'bare.log'), 'a', 0o600);
    const record = Buffer.from(JSON.stringify({ t: 'enq', input: INPUT }) + '\n');
    let notParked = 0;
    for (let i = 0; i < SAMPLES + 50; i++) {
      const taking = fetch(takeUrl, { headers: { authorization: token } });
      let parked = false;
      for (let k = 0; k < 200 && !parked; k++) {
        await sleep(1);
        parked = (await cp.services.jobQueue.depth(epD)).waitingWorkers > 0;
      }
      if (!parked) notParked++;
      let t = performance.now();
      const running = fetch(`${cp.url}/v2/${epD}/run`, { method: 'POST', headers: auth, body: runBody });
      const res = await taking;
      const job = (await res.json()) as { id: string };
      const d = performance.now() - t;
      await (await running).arrayBuffer();
      const done = await fetch(`${cp.url}/v2/${epD}/job-done/${workerId}/${job.id}?gpu=bench&isStream=false`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ output: OUTPUT }),
      });
      await done.arrayBuffer();
      if (done.status !== 200) throw new Error(`job-done: ${done.status}`);
      t = performance.now();
      await (await fetch(bareUrl)).arrayBuffer();
      const b = performance.now() - t;
      t = performance.now();
      await fh.appendFile(record);
      await fh.datasync();
      const f = performance.now() - t;
      if (i >= 50) {
        syncOnly.push(f);
        dispatch.push(d); // the first 50 warm up
        bareRt.push(b);
        added.push(d - b);
      }
    }
    await fh.close();
    await rm(scratch, { recursive: true, force: true });
    console.log(
      `dispatch: run → parked worker's job-take answer p50 ${median(dispatch).toFixed(2)} ms, p99 ${pct(dispatch, 99).toFixed(2)} ms; ` +
        `bare HTTP round trip p50 ${median(bareRt).toFixed(2)} ms, p99 ${pct(bareRt, 99).toFixed(2)} ms; ` +
        `for scale (no floor), one bare append+fdatasync on this disk p50 ${median(syncOnly).toFixed(2)} ms, p99 ${pct(syncOnly, 99).toFixed(2)} ms; ${SAMPLES} samples` +
        (notParked ? `; ${notParked} takes not seen parked within 200 ms` : ''),
    );

    // 2. throughput
    const epT = await newEndpoint();
    for (let w = 0; w < WORKERS; w++) {
      const id = await directory.issue(epT);
      workers.push(
        startWorker({ handler: () => OUTPUT, concurrency: 1, handleSignals: false, env: workerEnv(cp.url, epT, id.workerId, id.token, 10_000), logger: quiet }),
      );
    }
    let finals = 0;
    let onAll: (() => void) | null = null;
    const unsubscribe = cp.services.jobQueue.onFinal((job) => {
      if (job.endpointId === epT && ++finals === JOBS) onAll?.();
    });
    const jobsRound = async (): Promise<number> => {
      finals = 0;
      const all = new Promise<void>((r) => (onAll = r));
      let sent = 0;
      const t = performance.now();
      const lane = async () => {
        while (sent < JOBS) {
          sent++;
          const res = await fetch(`${cp.url}/v2/${epT}/run`, { method: 'POST', headers: auth, body: runBody });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`run: ${res.status}`);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      await all;
      return JOBS / ((performance.now() - t) / 1000);
    };
    const bareRound = async (): Promise<number> => {
      const n = JOBS * 3;
      let sent = 0;
      const t = performance.now();
      const lane = async () => {
        while (sent < n) {
          sent++;
          await (await fetch(bareUrl)).arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      return n / ((performance.now() - t) / 1000);
    };
    await jobsRound(); // warm-up
    await bareRound();
    const profile = await startProfile(process.env.BENCH_CPU_PROFILE);
    const ratios: number[] = [];
    const jobRates: number[] = [];
    const bareRates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let j: number;
      let b: number;
      if (r % 2 === 0) {
        j = await jobsRound();
        b = await bareRound();
      } else {
        b = await bareRound();
        j = await jobsRound();
      }
      jobRates.push(j);
      bareRates.push(b);
      ratios.push(j / b);
    }
    unsubscribe();
    await profile.stop();
    console.log(
      `throughput: ${median(jobRates).toFixed(0)} jobs/s run→job-done (${WORKERS} SDK workers, ${IN_FLIGHT} run lanes, fsync on); ` +
        `bare Fastify ${median(bareRates).toFixed(0)} req/s; ratios ${ratios.map((x) => x.toFixed(3)).join(', ')}`,
    );

    checkTarget({ name: 'dispatch added latency p50 (run → waiting worker, over a bare HTTP round trip)', value: median(added), op: '<=', floor: 2, unit: ' ms' });
    checkTarget({ name: 'dispatch added latency p99', value: pct(added, 99), op: '<=', floor: 10, unit: ' ms' });
    checkTarget({ name: 'jobs/s run→job-done vs bare Fastify req/s', value: median(ratios), op: '>=', floor: 0.15, unit: '×', digits: 3 });
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await bare.close();
    await cp.close();
  }
}

await main();
