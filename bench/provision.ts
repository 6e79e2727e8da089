// bench/provision: create-to-RUNNING through the API on a local test host, as a ratio to a bare
// `docker run -d` over one already-open SSH connection, measured in the same run (target ≤ 1.5).
import { performance } from 'node:perf_hooks';
import { SshPool } from '../fleet/ssh-pool.ts';
import { provisioner } from '../provisioner/index.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, startTestHost } from '../test/harness/index.ts';

const N = Number(process.env.N ?? 10);
const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const image = await ensureTestImage();
const host = await startTestHost({ name: `bench-${process.pid}`, gpus: Array(Math.max(8, N)).fill(FIXTURE_GPUS.H100_80GB_HBM3) });
const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 2000 });
try {
  // baseline: one pooled connection, `docker run -d` then wait until it reports running
  const pool = new SshPool();
  const target = { hostId: 'bench', address: host.address, port: host.port, user: 'root', privateKey: host.privateKey, pinnedFingerprint: null };
  await pool.connect(target);
  const bare: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await pool.exec(target, ['docker', 'run', '-d', '--label', 'gpufleet-bench=1', '--runtime', 'nvidia', '-e', 'NVIDIA_VISIBLE_DEVICES=GPU-x', '-p', '8080/tcp', image, ...SLEEPER]);
    bare.push(performance.now() - t);
  }
  await removeContainersByLabel('gpufleet-bench=1');
  await pool.closeAll();

  const enrolled = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${host.address}:${host.port}`, privateKey: host.privateKey } });
  const hostId = ((await enrolled.json()) as { id: string }).id;
  await new Promise((r) => setTimeout(r, 500));
  const ours: number[] = [];
  const created: string[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    const res = await cp.api('/v2/pods', { method: 'POST', json: { name: `b${i}`, image, args: SLEEPER.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' '), gpu: { id: 'NVIDIA H100 80GB HBM3' }, ports: ['8080/http'], disk: 1 } });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 201 || !body.id) throw new Error(`create failed: ${JSON.stringify(body)}`);
    const id = body.id;
    for (;;) {
      const p = (await (await cp.api(`/v2/pods/${id}`)).json()) as { status: string };
      if (p.status === 'RUNNING') break;
      if (p.status === 'ERROR') throw new Error(JSON.stringify(p));
      await new Promise((r) => setTimeout(r, 5));
    }
    ours.push(performance.now() - t);
    created.push(id);
  }
  // like the baseline, containers are removed after the measured loop, not between iterations
  for (const id of created) await cp.api(`/v2/pods/${id}`, { method: 'DELETE' });
  const b = median(bare);
  const o = median(ours);
  console.log(`provision: create-to-RUNNING median ${o.toFixed(0)} ms over ${N}; bare docker run over SSH ${b.toFixed(0)} ms; ratio ${(o / b).toFixed(2)} (target ≤ 1.5)`);
  // the provisioner removes terminated pods' containers; wait for it, then sweep what is left
  const left = () => listContainers(`gpufleet.host=${hostId}`).then((l) => l.length, () => 1);
  for (let i = 0; i < 100 && (await left()) > 0; i++) await new Promise((r) => setTimeout(r, 200));
  await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
} finally {
  await cp.close();
  await host.dispose();
}
