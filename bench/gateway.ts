// The load-balancing gateway's overhead (docs/gateway.md): requests/s of one worker through the gateway
// ÷ the same worker called directly, in one run, and the latency the gateway adds. The worker is a
// small Node HTTP server answering 1 KB at once, in a process of its own; the control plane (request
// guard: rate limit, API key, scope; the gateway: rewrite, balancer, undici's dispatcher (forward.ts))
// runs in this process; the client is a keep-alive load generator in a worker thread that stays for
// the whole bench (bench/http-load.ts LoadClient), warmed before the first round, so its JIT is in the
// same state in every run. What is measured:
//   - throughput: CONCURRENCY requests in flight, ROUNDS rounds of a direct run and a gateway run back
//     to back (order alternating); the ratio is the median of the rounds' ratios. Floor ≥ 0.7.
//   - where the CPU goes, per request: the client's thread, the worker's process and the gateway's
//     thread (Linux /proc), and from them the two figures that explain the ratio: the gateway's
//     capacity beside the worker's (requests per CPU-second of each: the ratio a machine would show
//     where each had a core of its own and the client was elsewhere), and the best ratio any proxy of
//     the gateway's cost could show on this machine (all three sharing its cores).
//   - added latency: one request at a time, p50 through the gateway − p50 direct. Floor ≤ 1 ms.
// The floors are on the gateway reaching the worker by plain TCP (TcpConnector: a network only the
// control plane reaches). The same is then measured through a real sshd test host's SSH connection
// (SshConnector, forwarded channels, as the gateway reaches containers) and printed beside, without a
// floor: it is what SSH's encryption costs here (BENCH_SSH=0 skips it).
//   npx tsx bench/gateway.ts
import Fastify from 'fastify';
import net from 'node:net';
import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'undici';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forward } from '../gateway/index.ts';
import { startLocalLbWorld, type LocalLbWorld } from '../test/harness/lb-local.ts';
import { startTestHost, type TestHost } from '../testing/index.ts';
import { waitFor } from '../test/harness/wait-for.ts';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { LoadClient, type LoadRequest, type LoadResult } from './http-load.ts';
import { checkTarget } from './target.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PER_LANE = Number(process.env.BENCH_PER_LANE ?? 400);
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SSH = process.env.BENCH_SSH !== '0';

// the worker: plain JavaScript, no dependencies, its own process
const WORKER = `
const http = require('node:http');
const kb = 'x'.repeat(1024);
const server = http.createServer((req, res) => {
  if (req.url === '/ping') { res.end('ok'); return; }
  res.setHeader('content-type', 'text/plain');
  res.end(kb);
});
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

async function startWorker(): Promise<{ proc: ChildProcess; port: number; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpufleet-bench-gw-'));
  const file = path.join(dir, 'worker.cjs');
  writeFileSync(file, WORKER);
  const proc = fork(file, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (m) => resolve(Number(m)));
    proc.once('exit', (c) => reject(new Error(`worker exited ${c}`)));
  });
  return { proc, port, dir };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** user + system CPU of a process, or of one thread of this process, in µs (clock ticks of 10 ms) */
function cpuUs(statPath: string): number {
  const f = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}
const gatewayThread = `/proc/self/task/${process.pid}/stat`;

/** CPU per request of each party in a run, µs */
interface Cpu {
  client: number;
  worker: number;
  gateway: number;
}

const client = new LoadClient();
let workerStat = '';

async function measure(world: LocalLbWorld, label: string): Promise<{ ratio: number; direct: number; gateway: number; addedP50: number; directP50: number; gatewayP50: number; cpus: Cpu[]; directCpus: Cpu[] }> {
  const direct = { url: world.direct[0]!, headers: {}, path: '/kb' };
  const gateway = { url: world.cp.url, headers: { authorization: `Bearer ${world.key}` }, path: `/v2/${world.endpointId}/kb` };
  const lanes = (p: string, lanesN: number, n: number): LoadRequest[][] => Array.from({ length: lanesN }, () => Array.from({ length: n }, () => ({ method: 'GET', path: p, expect: 200 })));
  const run = (t: typeof direct, concurrency: number, n: number): Promise<LoadResult> =>
    client.run({ url: t.url, headers: t.headers, concurrency, lanes: lanes(t.path, concurrency, n) });
  // warm up both (JIT of all three, connection pools, undici's pool to the worker)
  for (let i = 0; i < 3; i++) {
    await run(direct, CONCURRENCY, 300);
    await run(gateway, CONCURRENCY, 300);
  }
  const ratios: number[] = [];
  const d: number[] = [];
  const g: number[] = [];
  const cpus: Cpu[] = [];
  const directCpus: Cpu[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [direct, gateway] : [gateway, direct];
    const results = new Map<typeof direct, LoadResult>();
    let elu = 0;
    for (const t of order) {
      const before = performance.eventLoopUtilization();
      const w0 = cpuUs(workerStat);
      const g0 = cpuUs(gatewayThread);
      const r = await run(t, CONCURRENCY, PER_LANE);
      const cpu = { client: r.clientCpuUs, worker: (cpuUs(workerStat) - w0) / r.done, gateway: (cpuUs(gatewayThread) - g0) / r.done };
      results.set(t, r);
      if (t === gateway) {
        elu = performance.eventLoopUtilization(before).utilization;
        cpus.push(cpu);
      } else directCpus.push(cpu);
    }
    const rd = results.get(direct)!.perSecond;
    const rg = results.get(gateway)!.perSecond;
    d.push(rd);
    g.push(rg);
    ratios.push(rg / rd);
    const c = cpus.at(-1)!;
    const dc = directCpus.at(-1)!;
    console.log(
      `${label} round ${i + 1}: direct ${rd.toFixed(0)} req/s, through the gateway ${rg.toFixed(0)} req/s, ratio ${(rg / rd).toFixed(3)}; ` +
        `CPU µs/req direct: client ${dc.client.toFixed(0)}, worker ${dc.worker.toFixed(0)}; through the gateway: client ${c.client.toFixed(0)}, worker ${c.worker.toFixed(0)}, gateway ${c.gateway.toFixed(0)} (its thread busy ${(elu * 100).toFixed(0)}%)`,
    );
  }
  // latency: one at a time, alternating halves
  const half = Math.floor(LATENCY_REQUESTS / 2);
  const l1 = await run(direct, 1, half);
  const l2 = await run(gateway, 1, half);
  const l3 = await run(gateway, 1, half);
  const l4 = await run(direct, 1, half);
  const directP50 = (l1.p50 + l4.p50) / 2;
  const gatewayP50 = (l2.p50 + l3.p50) / 2;
  console.log(`${label} latency p50 (one at a time): direct ${directP50.toFixed(3)} ms, through the gateway ${gatewayP50.toFixed(3)} ms; p99 ${((l1.p99 + l4.p99) / 2).toFixed(3)} / ${((l2.p99 + l3.p99) / 2).toFixed(3)} ms`);
  return { ratio: median(ratios), direct: median(d), gateway: median(g), addedP50: gatewayP50 - directP50, directP50, gatewayP50, cpus, directCpus };
}

type ProxyUnderTest = { url: string; close(): Promise<void> };

/**
 * The floors under any gateway built this way, measured the same way as the gateway: a bare Fastify
 * sending the request on with the gateway's own forward() (undici dispatcher), with no key check, rate
 * limit, metrics or balancer; and under that a TCP relay (one connection to the worker per client
 * connection, bytes piped both ways, no HTTP at all): what the sockets alone cost. What the gateway
 * measures below the first is what the request guard and the balancer cost; what the relay measures
 * below direct is what one more hop over this machine's loopback costs.
 */
async function baselines(workerPort: number): Promise<void> {
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  const origin = `http://127.0.0.1:${workerPort}`;
  const bare = async (): Promise<ProxyUnderTest> => {
    const app = Fastify({ logger: false });
    app.get('/kb', (request, reply) => {
      forward(agent, request.raw, reply.raw, { origin, path: '/kb', body: null, timeoutMs: 30_000, callerIp: request.ip, callerProto: 'http', ownHeaders: {}, onAnswer: () => reply.hijack(), onClose: () => undefined }).catch((e: unknown) => reply.send(e));
      return reply;
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, close: () => app.close() };
  };
  const relay = async (): Promise<ProxyUnderTest> => {
    const server = net.createServer((down) => {
      const up = net.connect(workerPort, '127.0.0.1');
      down.setNoDelay(true);
      up.setNoDelay(true);
      down.pipe(up);
      up.pipe(down);
      down.on('error', () => up.destroy());
      up.on('error', () => down.destroy());
      down.on('close', () => up.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  };
  const lanes = (u: string, n: number) => ({ url: u, headers: {}, concurrency: CONCURRENCY, lanes: Array.from({ length: CONCURRENCY }, () => Array.from({ length: n }, () => ({ method: 'GET', path: '/kb', expect: 200 }))) });
  for (const [label, start] of [
    ['a bare Fastify + forward() (undici dispatcher) proxy', bare],
    ['a TCP relay (no HTTP: the sockets alone)', relay],
  ] as const) {
    const p = await start();
    try {
      for (let i = 0; i < 3; i++) await client.run(lanes(p.url, 300));
      const ratios: number[] = [];
      const proxyCpu: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const d = await client.run(lanes(origin, PER_LANE));
        const g0 = cpuUs(gatewayThread);
        const b = await client.run(lanes(p.url, PER_LANE));
        proxyCpu.push((cpuUs(gatewayThread) - g0) / b.done);
        ratios.push(b.perSecond / d.perSecond);
      }
      console.log(`baseline (no floor): ${label} ÷ direct, median of rounds: ${median(ratios).toFixed(3)}× (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}); its thread ${median(proxyCpu).toFixed(0)} µs/req`);
    } finally {
      await p.close();
    }
  }
  await agent.destroy();
}

/**
 * What the CPU figures say. Requests per CPU-second: the worker's 1e6/w, the gateway's 1e6/g. On this
 * machine the three parties share its cores: a run is limited by the busiest party alone (1e6 / its
 * µs) or by all of them together (cores × 1e6 / the sum), whichever is lower; that bound, for the direct
 * run and for the run through the gateway, gives the best ratio the machine allows a proxy of the
 * gateway's cost (no scheduling loss), per round; the medians are printed.
 */
function explain(cpus: Cpu[], directCpus: Cpu[]): void {
  const cores = availableParallelism();
  const bound = (parts: number[]) => Math.min(1e6 / Math.max(...parts), (cores * 1e6) / parts.reduce((a, b) => a + b, 0));
  const best = cpus.map((c, i) => bound([c.client, c.worker, c.gateway]) / bound([directCpus[i]!.client, directCpus[i]!.worker]));
  const mid = (pick: (c: Cpu) => number) => median(cpus.map(pick));
  console.log(
    `CPU per request through the gateway (medians): client ${mid((c) => c.client).toFixed(0)} µs, worker ${mid((c) => c.worker).toFixed(0)} µs, gateway ${mid((c) => c.gateway).toFixed(0)} µs. ` +
      `Gateway capacity ÷ worker capacity (each on a core of its own): ${median(cpus.map((c) => c.worker / c.gateway)).toFixed(3)}×. ` +
      `Best ratio this machine's ${cores} cores allow a proxy of the gateway's cost: ${median(best).toFixed(3)}×`,
  );
}

async function ready(world: LocalLbWorld): Promise<void> {
  await waitFor('the worker in rotation', async () => world.cp.services.workers.liveness.of(world.workerIds[0]!).check?.ready === true, 30_000);
}

async function main(): Promise<void> {
  const worker = await startWorker();
  workerStat = `/proc/${worker.proc.pid}/stat`;
  const limits = 'minute=1000000000,hour=1000000000,day=1000000000';
  let host: TestHost | null = null;
  try {
    const tcp = await startLocalLbWorld({ workerPorts: [worker.port], rateLimits: limits });
    let t;
    try {
      await ready(tcp);
      t = await measure(tcp, 'tcp');
    } finally {
      await tcp.close();
    }
    console.log(`worker: 1 KB at once, own process; ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${CONCURRENCY * PER_LANE} requests per side; ${availableParallelism()} cores`);
    explain(t.cpus, t.directCpus);
    await baselines(worker.port);
    checkTarget({ name: 'gateway req/s ÷ direct req/s (TCP to the worker, median of rounds)', value: t.ratio, op: '>=', floor: 0.7, unit: '×', digits: 3 });
    checkTarget({ name: 'gateway added latency p50 (TCP to the worker)', value: t.addedP50, op: '<=', floor: 1, unit: ' ms', digits: 3 });
    if (SSH) {
      host = await startTestHost({ name: `bench-gw-${process.pid}` });
      const ssh = await startLocalLbWorld({ workerPorts: [worker.port], rateLimits: limits, ssh: host });
      try {
        await ready(ssh);
        const s = await measure(ssh, 'ssh');
        console.log(`SSH channel path (no floor): ratio ${s.ratio.toFixed(3)}× (${s.gateway.toFixed(0)} vs ${s.direct.toFixed(0)} req/s), added latency p50 ${s.addedP50.toFixed(3)} ms`);
      } finally {
        await ssh.close();
      }
    }
  } finally {
    await client.close();
    worker.proc.kill();
    await host?.dispose();
    rmSync(worker.dir, { recursive: true, force: true });
  }
}

await main();
