// The load-balancing gateway's overhead (docs/gateway.md): requests/s of one worker through the gateway
// ÷ the same worker called directly, in one run, and the latency the gateway adds. The worker is a
// small Node HTTP server answering 1 KB at once, in a process of its own; the control plane (request
// guard: rate limit, API key, scope; the gateway: rewrite, balancer, undici's dispatcher (forward.ts))
// runs in this process; the client is a keep-alive load generator in a worker thread
// (bench/http-load.ts). What is measured:
//   - throughput: CONCURRENCY requests in flight, ROUNDS rounds of a direct run and a gateway run back
//     to back (order alternating); the ratio is the median of the rounds' ratios. Floor ≥ 0.7.
//   - added latency: one request at a time, p50 through the gateway − p50 direct. Floor ≤ 1 ms.
// The floors are on the gateway reaching the worker by plain TCP (TcpConnector: a network only the
// control plane reaches). The same is then measured through a real sshd test host's SSH connection
// (SshConnector, forwarded channels, as the gateway reaches containers) and printed beside, without a
// floor: it is what SSH's encryption costs here (BENCH_SSH=0 skips it).
//   npx tsx bench/gateway.ts
import Fastify from 'fastify';
import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'undici';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forward } from '../gateway/forward.ts';
import { startLocalLbWorld, type LocalLbWorld } from '../test/harness/lb-local.ts';
import { startTestHost, type TestHost } from '../test/harness/test-host.ts';
import { waitFor } from '../test/harness/wait-for.ts';
import { runLoad, type LoadRequest, type LoadResult } from './http-load.ts';
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

async function measure(world: LocalLbWorld, label: string): Promise<{ ratio: number; direct: number; gateway: number; addedP50: number; directP50: number; gatewayP50: number }> {
  const direct = { url: world.direct[0]!, headers: {}, path: '/kb' };
  const gateway = { url: world.cp.url, headers: { authorization: `Bearer ${world.key}` }, path: `/v2/${world.endpointId}/kb` };
  const lanes = (p: string, lanesN: number, n: number): LoadRequest[][] => Array.from({ length: lanesN }, () => Array.from({ length: n }, () => ({ method: 'GET', path: p, expect: 200 })));
  const run = (t: typeof direct, concurrency: number, n: number): Promise<LoadResult> =>
    runLoad({ url: t.url, headers: t.headers, concurrency, lanes: lanes(t.path, concurrency, n) });
  // warm up both (JIT, connection pools, undici's pool to the worker)
  await run(direct, CONCURRENCY, 150);
  await run(gateway, CONCURRENCY, 150);
  const ratios: number[] = [];
  const d: number[] = [];
  const g: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [direct, gateway] : [gateway, direct];
    const results = new Map<typeof direct, LoadResult>();
    let elu = 0;
    for (const t of order) {
      const before = performance.eventLoopUtilization();
      results.set(t, await run(t, CONCURRENCY, PER_LANE));
      if (t === gateway) elu = performance.eventLoopUtilization(before).utilization;
    }
    const rd = results.get(direct)!.perSecond;
    const rg = results.get(gateway)!.perSecond;
    d.push(rd);
    g.push(rg);
    ratios.push(rg / rd);
    // the gateway's thread: how busy it was, and so its capacity (requests per busy second)
    console.log(`${label} round ${i + 1}: direct ${rd.toFixed(0)} req/s, through the gateway ${rg.toFixed(0)} req/s, ratio ${(rg / rd).toFixed(3)}; gateway thread busy ${(elu * 100).toFixed(0)}% (${(rg / Math.max(elu, 1e-6)).toFixed(0)} req per busy s)`);
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
  return { ratio: median(ratios), direct: median(d), gateway: median(g), addedP50: gatewayP50 - directP50, directP50, gatewayP50 };
}

/**
 * The floor under any gateway built this way: a bare Fastify sending the request on with the gateway's
 * own forward() (undici dispatcher) to the same worker, with no key check, rate limit, metrics or
 * balancer, measured the same way. What the gateway measures below this is what those cost.
 */
async function bareProxy(workerPort: number): Promise<void> {
  const app = Fastify({ logger: false });
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  const origin = `http://127.0.0.1:${workerPort}`;
  app.get('/kb', (request, reply) => {
    forward(agent, request.raw, reply.raw, { origin, path: '/kb', body: null, timeoutMs: 30_000, callerIp: request.ip, callerProto: 'http', ownHeaders: {}, onAnswer: () => reply.hijack(), onClose: () => undefined }).catch((e: unknown) => reply.send(e));
    return reply;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  try {
    const lanes = (u: string, n: number) => ({ url: u, headers: {}, concurrency: CONCURRENCY, lanes: Array.from({ length: CONCURRENCY }, () => Array.from({ length: n }, () => ({ method: 'GET', path: '/kb', expect: 200 }))) });
    await runLoad(lanes(url, 150));
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const d = await runLoad(lanes(`http://127.0.0.1:${workerPort}`, PER_LANE));
      const b = await runLoad(lanes(url, PER_LANE));
      ratios.push(b.perSecond / d.perSecond);
    }
    console.log(`baseline (no floor): a bare Fastify + forward() (undici dispatcher) proxy ÷ direct, median of rounds: ${median(ratios).toFixed(3)}× (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`);
  } finally {
    await app.close();
    await agent.destroy();
  }
}

async function ready(world: LocalLbWorld): Promise<void> {
  await waitFor('the worker in rotation', async () => world.cp.services.workers.liveness.of(world.workerIds[0]!).check?.ready === true, 30_000);
}

async function main(): Promise<void> {
  const worker = await startWorker();
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
    console.log(`worker: 1 KB at once, own process; ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${CONCURRENCY * PER_LANE} requests per side`);
    await bareProxy(worker.port);
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
    worker.proc.kill();
    await host?.dispose();
    rmSync(worker.dir, { recursive: true, force: true });
  }
}

await main();
