// bench/provision: create-to-RUNNING through the API on a local test host, as a ratio to a bare
// `docker run -d` over one already-open SSH connection that then waits, like the API side, until
// Docker reports the container running (`docker inspect`). Both sides run in the same process against
// the same host, one warm-up each, then N of each interleaved (the order alternating), so both see
// the same machine load; the ratio is of the medians. Floor: ≤ 1.5× the bare docker run, and no
// create slower than 3× the median. The API side polls its pod every few ms: the control plane runs
// with request quotas far above that (the default 600 a minute ran out within a run, and a create
// then waited out the rest of the minute on 429s it read as "not running yet").
import { performance } from 'node:perf_hooks';
import { SshPool } from '../fleet/index.ts';
import { provisioner } from '../provisioner/index.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, removeNetworksByLabel, startTestHost } from '../test/harness/index.ts';
import { checkTarget } from './target.ts';

const N = Number(process.env.N ?? 10);
const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** nearest-rank percentile (p90 of 10 is the 9th smallest) */
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)]!;

const image = await ensureTestImage();
const host = await startTestHost({ name: `bench-${process.pid}`, gpus: Array(Math.max(8, N + 1)).fill(FIXTURE_GPUS.H100_80GB_HBM3) });
const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 2000, rateLimits: 'minute=1000000,hour=10000000,day=100000000' });
const pool = new SshPool();
try {
  const enrolled = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${host.address}:${host.port}`, privateKey: host.privateKey } });
  const hostId = ((await enrolled.json()) as { id: string }).id;
  await new Promise((r) => setTimeout(r, 500));

  // baseline: one pooled connection, `docker run -d`, then `docker inspect` until it reports running
  const target = { hostId: 'bench', address: host.address, port: host.port, user: 'root', privateKey: host.privateKey, pinnedFingerprint: null };
  await pool.connect(target);
  const bareRun = async (): Promise<number> => {
    const t = performance.now();
    const run = await pool.exec(target, ['docker', 'run', '-d', '--label', 'gpufleet-bench=1', '--runtime', 'nvidia', '-e', 'NVIDIA_VISIBLE_DEVICES=GPU-x', '-p', '8080/tcp', image, ...SLEEPER]);
    const cid = run.stdout.trim();
    if (run.code !== 0 || !cid) throw new Error(`docker run failed: ${run.stderr}`);
    for (;;) {
      const state = await pool.exec(target, ['docker', 'inspect', '--format', '{{.State.Status}}', cid]);
      if (state.stdout.trim() === 'running') break;
      if (state.code !== 0 || state.stdout.trim() === 'exited') throw new Error(`bench container ${cid}: ${state.stdout}${state.stderr}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return performance.now() - t;
  };

  // ours: POST /v2/pods, then GET until the pod is RUNNING (the provisioner ran and inspected it)
  const created: string[] = [];
  const apiRun = async (): Promise<number> => {
    const t = performance.now();
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: `b${created.length}`, image, args: SLEEPER.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' '), gpu: { id: 'NVIDIA H100 80GB HBM3' }, ports: ['8080/http'], disk: 1 } });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 201 || !body.id) throw new Error(`create failed: ${JSON.stringify(body)}`);
    const id = body.id;
    created.push(id);
    for (;;) {
      const res = await cp.api(`/v2/pods/${id}`);
      // anything but the pod (a 429 above all) is a failed bench, never "not running yet"
      if (res.status !== 200) throw new Error(`GET /v2/pods/${id}: ${res.status} ${await res.text()}`);
      const p = (await res.json()) as { status: string };
      if (p.status === 'RUNNING') break;
      if (p.status === 'ERROR') throw new Error(JSON.stringify(p));
      await new Promise((r) => setTimeout(r, 5));
    }
    return performance.now() - t;
  };

  await bareRun(); // warm-up: image layers, the connection, the first container on the host
  await apiRun();
  const bare: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) {
      bare.push(await bareRun());
      ours.push(await apiRun());
    } else {
      ours.push(await apiRun());
      bare.push(await bareRun());
    }
  }
  // both sides' containers are removed after the measured loop, not between iterations
  await removeContainersByLabel('gpufleet-bench=1');
  for (const id of created) await cp.api(`/v2/pods/${id}`, { method: 'DELETE' });
  const b = median(bare);
  const o = median(ours);
  console.log(`provision: create-to-RUNNING median ${o.toFixed(0)} ms over ${N}; bare docker run (until running) over SSH ${b.toFixed(0)} ms; ratio ${(o / b).toFixed(2)}`);
  console.log(`  ours p90 ${percentile(ours, 90).toFixed(0)} ms, slowest ${Math.max(...ours).toFixed(0)} ms; bare p90 ${percentile(bare, 90).toFixed(0)} ms, slowest ${Math.max(...bare).toFixed(0)} ms`);
  console.log(`  ours ${ours.map((x) => x.toFixed(0)).join(', ')} ms; bare ${bare.map((x) => x.toFixed(0)).join(', ')} ms`);
  checkTarget({ name: 'provision create-to-RUNNING vs bare docker run', value: o / b, op: '<=', floor: 1.5, unit: '×' });
  // one slow create hides behind a median (a missed kick waits out the 2 s interval, a backoff longer)
  checkTarget({ name: 'provision slowest create vs its median', value: Math.max(...ours) / o, op: '<=', floor: 3, unit: '×' });
  // the provisioner removes terminated pods' containers; wait for it, then sweep what is left
  const left = () => listContainers(`gpufleet.host=${hostId}`).then((l) => l.length, () => 1);
  for (let i = 0; i < 100 && (await left()) > 0; i++) await new Promise((r) => setTimeout(r, 200));
  await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
} finally {
  await pool.closeAll();
  await removeContainersByLabel('gpufleet-bench=1').catch(() => undefined);
  await cp.close();
  await host.dispose();
}
