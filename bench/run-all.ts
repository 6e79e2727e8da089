// `npm run bench`: every bench, one after another (each in its own process, so one's heap and timers
// do not load the next), then each one's `target:` lines (bench/target.ts) in one summary. Exits
// non-zero when a bench misses its floor or fails to run.
//   npm run bench                 all of them
//   npm run bench -- store api    only those
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** each bench and its floor, as the README and issue 9 state them */
const BENCHES: { name: string; file: string; floor: string }[] = [
  { name: 'api', file: 'api.ts', floor: 'API server capacity ≥ 0.8× bare Fastify' },
  { name: 'store', file: 'store.ts', floor: '≥ 1,000 mutations/s at 10,000 pods' },
  { name: 'scheduler', file: 'scheduler.ts', floor: '≥ 50,000 placements/s at 10,000 hosts' },
  { name: 'provision', file: 'provision.ts', floor: 'create-to-RUNNING ≤ 1.5× bare docker run' },
  { name: 'graphql', file: 'graphql.ts', floor: 'GraphQL ≥ 0.5× REST' },
  { name: 'plan', file: 'plan.ts', floor: 'plan ≤ 2× list' },
  { name: 'gateway', file: 'gateway.ts', floor: 'load balancer req/s ≥ 0.7× the worker called directly; added latency p50 ≤ 1 ms' },
  { name: 'serverless', file: 'serverless.ts', floor: 'dispatch added latency p50 ≤ 2 ms, p99 ≤ 10 ms; jobs/s ≥ 0.15× bare Fastify req/s' },
  { name: 'cold-start', file: 'cold-start.ts', floor: 'run on an endpoint with no worker → job taken ≤ 1.3× bare docker run over SSH + worker boot' },
  { name: 'pg-queue', file: 'pg-queue.ts', floor: 'cross-replica take wake-up p50 ≤ 100 ms; PostgreSQL queue jobs/s vs embedded printed (no floor)' },
  { name: 'replicas', file: 'replicas.ts', floor: 'mutations/s at 10,000 pods: 3 PostgreSQL replicas ≥ 1.0× one; 1,000-host reconcile round printed' },
  { name: 'console-session', file: 'console-session.ts', floor: 'API with the console session cookie ≥ 0.9× with the Bearer key (server capacity)' },
  { name: 'cli-start', file: 'cli-start.ts', floor: 'gpufleet --help wall time ≤ 6× node -e 0' },
  { name: 'overlay', file: 'overlay.ts', floor: 'overlay ≥ 0.8× host-gw throughput (iperf3), added round trip p50 ≤ 0.1 ms; names visible after RUNNING and gone after stop p50 ≤ 2 s; resolution in a pod p50 ≤ 1 ms' },
  { name: 'console', file: 'console.ts', floor: 'web console in Chromium: first page usable ≤ 1.5 s; 1,000 pods list ≤ 0.5 s; state change visible ≤ 2 s' },
];

const only = process.argv.slice(2);
const unknown = only.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown.length) {
  console.error(`unknown bench ${unknown.join(', ')}; choose from ${BENCHES.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const chosen = only.length ? BENCHES.filter((b) => only.includes(b.name)) : BENCHES;

function runBench(file: string): Promise<{ code: number | null; targets: string[]; seconds: number }> {
  const t = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, file)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const targets: string[] = [];
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      process.stdout.write(d);
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) if (l.startsWith('target: ')) targets.push(l.slice('target: '.length));
    });
    child.on('close', (code) => {
      if (pending.startsWith('target: ')) targets.push(pending.slice('target: '.length));
      resolve({ code, targets, seconds: (performance.now() - t) / 1000 });
    });
  });
}

const summary: string[] = [];
let failed = 0;
for (const b of chosen) {
  console.log(`\n== bench/${b.file} (floor: ${b.floor})`);
  const r = await runBench(b.file);
  const missed = r.targets.some((t) => t.endsWith(' MISS'));
  const ok = r.code === 0 && r.targets.length > 0 && !missed;
  if (!ok) failed++;
  const why = r.code !== 0 && !missed ? ` (exit ${r.code}${r.targets.length ? '' : ', no target line'})` : r.targets.length === 0 ? ' (no target line)' : '';
  summary.push(`${ok ? 'PASS' : 'FAIL'} ${b.name.padEnd(10)} ${r.targets.join('; ') || b.floor}${why}  [${r.seconds.toFixed(0)} s]`);
}
console.log(`\n== summary\n${summary.join('\n')}`);
if (failed) {
  console.log(`${failed} of ${chosen.length} benches missed their floor or did not run`);
  process.exitCode = 1;
}
