// Plan time for a stack of 1,000 pods against a control plane that already holds them, as a ratio to
// the baseline measured in the same run: listing those 1,000 pods through the API (GET /v2/pods), the
// one read a plan cannot avoid. The plan adds the other kinds' lists, matching by ownership tags and
// the field-by-field diff; a ratio near 1 means the diff costs little beside the read. Floor: plan ≤ 2× list.
//   npx tsx bench/plan.ts
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App } from 'cdktf';
import { GpufleetStack, Pod } from '../provider/index.ts';
import { RetryingApiClient } from '../provider/index.ts';
import { readLiveState } from '../provider/index.ts';
import { hasChanges, planStack, type LiveState } from '../provider/index.ts';
import { captureReporter } from '../provider/index.ts';
import { makePlan, runApply } from '../provider/index.ts';
import { readSynthDir } from '../provider/index.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { checkTarget } from './target.ts';

const PODS = 1000;
const RUNS = 15;
const GPU = 'NVIDIA H100 80GB HBM3';
const TARGET_RATIO = 2;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const cp = await startTestControlPlane({ rateLimits: 'minute=1000000,hour=10000000,day=100000000' });
try {
  // half GPU pods (1 GPU each on 8-GPU hosts), half CPU pods (2 vCPU on 128-vCPU hosts)
  await seedHosts(cp.services.store, [
    ...Array.from({ length: PODS / 2 / 8 + 1 }, () => ({ gpus: 8 })),
    ...Array.from({ length: 10 }, (_, i) => ({ gpus: 0, id: `cpu-${i}`, cpuCount: 128, memoryGb: 1024 })),
  ]);
  const { key } = await cp.newAccount('read_write', 10_000_000);
  const api = new RetryingApiClient({ url: cp.url, apiKey: key });

  const outdir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-plan-'));
  const synthMs = await time(async () => {
    const app = new App({ outdir });
    const stack = new GpufleetStack(app, 'bench');
    for (let i = 0; i < PODS; i++) {
      const name = `pod-${String(i).padStart(4, '0')}`;
      const compute = i % 2 ? { gpu: { id: GPU, count: 1 } } : { cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } };
      new Pod(stack, name, { name, image: `registry.local/job:${i % 7}`, env: { SHARD: String(i) }, ports: ['8888/http'], ...compute });
    }
    app.synth();
  });
  const [stack] = await readSynthDir(outdir);
  await rm(outdir, { recursive: true, force: true });

  const applyMs = await time(() => runApply(stack!, { api, reporter: captureReporter(), out: () => {}, autoApprove: true, wait: false, concurrency: 16 }));
  const check = await makePlan(stack!, api);
  if (hasChanges(check)) throw new Error('after apply, the plan should have nothing to do');

  const list = async () => {
    const { pods } = await api.get<{ pods: unknown[] }>('/v2/pods');
    if (pods.length !== PODS) throw new Error(`listed ${pods.length} pods`);
  };
  await list();
  await makePlan(stack!, api); // warm both paths
  const listTimes: number[] = [];
  const planTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    listTimes.push(await time(list));
    planTimes.push(await time(() => makePlan(stack!, api)));
  }
  // where a plan's time goes: the reads (all kinds, in parallel) and the diff itself
  const readTimes: number[] = [];
  const diffTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let live: LiveState | undefined;
    readTimes.push(await time(async () => (live = await readLiveState(api, stack!))));
    diffTimes.push(await time(async () => planStack(stack!, live!)));
  }
  const l = median(listTimes);
  const p = median(planTimes);
  console.log(`stack of ${PODS} pods: synth ${synthMs.toFixed(0)} ms, first apply ${(applyMs / 1000).toFixed(1)} s`);
  console.log(`baseline  list ${PODS} pods (GET /v2/pods): median ${l.toFixed(1)} ms over ${RUNS} runs`);
  console.log(`plan      ${PODS} pods, no changes:          median ${p.toFixed(1)} ms over ${RUNS} runs`);
  console.log(`          of which: read live state ${median(readTimes).toFixed(1)} ms, diff ${median(diffTimes).toFixed(1)} ms`);
  console.log(`ratio     plan / list = ${(p / l).toFixed(2)}`);
  checkTarget({ name: `plan of ${PODS} pods vs list of ${PODS} pods`, value: p / l, op: '<=', floor: TARGET_RATIO, unit: '×' });
} finally {
  await cp.close();
}
