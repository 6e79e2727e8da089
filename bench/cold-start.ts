// bench/cold-start: `run` on a queue endpoint with no worker → the job taken by the worker the
// autoscaler started for it (the job's `startedAt`, the take's own record), on a real sshd test host
// with the Node test worker image (test/harness/worker-images.ts). Baseline in the same run, against
// the same host and image: a bare `docker run -d` of that image over one already-open SSH connection,
// with the same worker environment pointed at a bare HTTP server, until that server receives the
// worker's first job-take (docker's start plus the worker's own boot). Each sample of ours is on a
// new endpoint (no worker, nothing warm but the image, the host's connection and the account's
// network on the host, which stays 10 minutes after the account's last pod there, as it does for an
// endpoint scaling up from zero again: docs/security.md), started once the previous sample's worker
// container is gone; the two alternate, one warm-up each, and the ratio is of the medians. The
// control plane runs with the product's reconcile interval. Floor: ≤ 1.3× the bare run.
//   npx tsx bench/cold-start.ts          (N=7 samples of each by default)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SshPool } from '../fleet/index.ts';
import { provisioner } from '../provisioner/index.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { dockerBridgeGateway, dockerInspect, FIXTURE_GPUS, removeContainersByLabel, removeNetworksByLabel, startTestHost } from '../test/harness/index.ts';
import { ensureNodeWorkerImage } from '../test/harness/worker-images.ts';
import { checkTarget } from './target.ts';

const N = Number(process.env.N ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const image = await ensureNodeWorkerImage();
const bridge = await dockerBridgeGateway();
const host = await startTestHost({ name: `cold-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3] });
// the product's default reconcile interval (GPUFLEET_RECONCILE_INTERVAL_MS, 2000), not the tests' 500
const cp = await startTestControlPlane({ host: bridge, background: [provisioner()], reconcileIntervalMs: 2000 });
const pool = new SshPool();

// the bare side's control plane: records when the first job-take of each bare worker arrives
const firstTake = new Map<string, number>();
const bare = http.createServer((req, res) => {
  const m = /\/job-take\/([^/?]+)/.exec(req.url ?? '');
  if (m && !firstTake.has(m[1]!)) firstTake.set(m[1]!, performance.now());
  req.resume();
  res.statusCode = m ? 204 : 200;
  res.end(m ? undefined : '{}');
});
await new Promise<void>((r) => bare.listen(0, bridge, r));
const bareOrigin = `http://${bridge}:${(bare.address() as AddressInfo).port}`;

let hostId = '';
try {
  const enrolled = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${host.address}:${host.port}`, privateKey: host.privateKey } });
  if (enrolled.status !== 201) throw new Error(`enroll: ${enrolled.status} ${await enrolled.text()}`);
  hostId = ((await enrolled.json()) as { id: string }).id;
  const user = await cp.newAccount('read_write', 1_000_000);
  const tpl = await cp.api('/v2/templates', { method: 'POST', key: user.key, json: { name: 'cold', image, disk: 1, serverless: true } });
  const templateId = ((await tpl.json()) as { id: string }).id;

  const target = { hostId: 'bench', address: host.address, port: host.port, user: 'root', privateKey: host.privateKey, pinnedFingerprint: null };
  await pool.connect(target);
  let n = 0;
  const bareRun = async (): Promise<number> => {
    const id = `bare-${process.pid}-${++n}`;
    const base = `${bareOrigin}/v2/ep-bench`;
    const env = {
      RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?gpu=bench`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?gpu=bench`,
      RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?gpu=bench`,
      RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID?gpu=bench`,
      RUNPOD_POD_ID: id,
      RUNPOD_ENDPOINT_ID: 'ep-bench',
      RUNPOD_AI_API_KEY: 'bench-token-0123456789',
    };
    const t = performance.now();
    const argv = ['docker', 'run', '-d', '--label', 'gpufleet-bench=1', '--runtime', 'nvidia', '-e', 'NVIDIA_VISIBLE_DEVICES=GPU-x'];
    for (const [k, v] of Object.entries(env)) argv.push('-e', `${k}=${v}`);
    const run = await pool.exec(target, [...argv, image]);
    if (run.code !== 0) throw new Error(`docker run failed: ${run.stderr}`);
    for (let i = 0; !firstTake.has(id); i++) {
      if (i > 6000) throw new Error('the bare worker never called job-take');
      await sleep(2);
    }
    return firstTake.get(id)! - t;
  };

  // when the provisioner began the container (its STARTING write overlaps the docker command) and saw it running
  const phases = new Map<string, { starting?: number; running?: number }>();
  cp.services.store.onCommit((changes) => {
    for (const c of changes) {
      const rec = c.record as { status?: string; endpointId?: string | null } | undefined;
      if (c.collection !== 'pods' || !rec?.endpointId) continue;
      const p = phases.get(rec.endpointId) ?? {};
      if (rec.status === 'STARTING') p.starting ??= Date.now();
      if (rec.status === 'RUNNING') p.running ??= Date.now();
      phases.set(rec.endpointId, p);
    }
  });

  const apiRun = async (): Promise<number> => {
    const res = await cp.api('/v1/endpoints', {
      method: 'POST',
      key: user.key,
      json: { templateId, name: `cold-${++n}`, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 60 },
    });
    if (res.status !== 200) throw new Error(`endpoint: ${res.status} ${await res.text()}`);
    const ep = ((await res.json()) as { id: string }).id;
    const t0 = Date.now();
    const t = performance.now();
    const ran = await cp.api(`/v2/${ep}/run`, { method: 'POST', key: user.key, json: { input: { n } } });
    const job = (await ran.json()) as { id: string };
    if (ran.status !== 200) throw new Error(`run: ${ran.status} ${JSON.stringify(job)}`);
    for (let i = 0; ; i++) {
      const j = await cp.services.jobQueue.get(job.id);
      if (j?.startedAt !== undefined) {
        const took = j.startedAt - t0;
        if (process.env.BENCH_VERBOSE) {
          const pods = await cp.services.store.list('pods', { endpointId: ep });
          const p = pods[0] as unknown as { createdAt: string; startedAt?: string | null; lastStartedAt?: string | null; worker: { readyAt: string | null } } | undefined;
          const at = (iso: string | null | undefined) => (iso ? `${Date.parse(iso) - t0}` : '-');
          const ph = phases.get(ep);
          const rel = (x: number | undefined) => (x === undefined ? '-' : `${x - t0}`);
          console.log(
            `  ours: worker record +${at(p?.createdAt)} ms, provisioner starts it +${rel(ph?.starting)}, container started +${at(p?.startedAt ?? p?.lastStartedAt)}, ` +
              `seen running +${rel(ph?.running)}, worker's first call +${at(p?.worker.readyAt)}, job taken +${took}`,
          );
        }
        // its worker goes; the next sample starts once its container is removed (as the bare side's are)
        const workerIds = (await cp.services.store.list('pods', { endpointId: ep })).map((p) => p.id);
        await cp.api(`/v1/endpoints/${ep}`, { method: 'DELETE', key: user.key });
        for (let k = 0; k < 300 && (await Promise.all(workerIds.map((w) => dockerInspect(`gpufleet-${w}`)))).some((c) => c !== null); k++) await sleep(50);
        return took;
      }
      if (i > 30_000 || performance.now() - t > 120_000) throw new Error(`job ${job.id} never taken: ${JSON.stringify(j)}`);
      await sleep(2);
    }
  };

  await bareRun(); // warm-up: image layers in the page cache, the connection, the first container
  await apiRun();
  const ours: number[] = [];
  const bares: number[] = [];
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) {
      bares.push(await bareRun());
      ours.push(await apiRun());
    } else {
      ours.push(await apiRun());
      bares.push(await bareRun());
    }
    await removeContainersByLabel('gpufleet-bench=1');
  }
  const o = median(ours);
  const b = median(bares);
  console.log(`cold start: run → job taken by a new worker median ${o.toFixed(0)} ms over ${N}; bare docker run over SSH + worker boot to its first job-take ${b.toFixed(0)} ms; ratio ${(o / b).toFixed(2)}`);
  console.log(`  ours ${ours.map((x) => x.toFixed(0)).join(', ')} ms; bare ${bares.map((x) => x.toFixed(0)).join(', ')} ms`);
  checkTarget({ name: 'cold start run → job taken vs bare docker run + worker boot', value: o / b, op: '<=', floor: 1.3, unit: '×' });
} finally {
  await pool.closeAll();
  await removeContainersByLabel('gpufleet-bench=1').catch(() => undefined);
  await cp.close();
  if (hostId) {
    await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  }
  await new Promise((r) => bare.close(r));
  await host.dispose();
}
