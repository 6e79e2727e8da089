// API overhead: routes through the whole stack (request guard: rate limit + API key + scope; route
// schemas: the body's validator, the response schema's serializer; the service; problem handlers;
// RateLimit headers) against a bare Fastify route that answers the same JSON (built per request like
// the real one, shallowly: the strictest baseline) with no hooks and no schemas. Three routes (issue 20 §2):
//   - GET /v2/pods/{id}: one pod view (fast-json-stringify from podViewSchema);
//   - GET /v2/pods: a list of LIST_PODS pod views;
//   - POST /v2/pods refused by validation: the body validator's 422 problem+json.
// Same client, same run: a keep-alive HTTP load generator in a worker thread (bench/http-load.ts, one
// thread kept warm for every run), CONCURRENCY requests in flight, warmed up first. ROUNDS rounds per
// route, each a bare run and an API run back to back (the order alternating), so a pair sees the same
// machine load. The floor is on the servers' capacity ratio (1 / the server thread's CPU time per
// request, median of the pairs): API ≥ 0.8× bare Fastify on each route; the raw throughput ratio
// (client-bound on few cores) and the event-loop utilisation are printed beside it.
//   npx tsx bench/api.ts
// BENCH_CPU_PROFILE=api.cpuprofile: after each route's measured rounds, one more run of each server
// (ROUNDS × the requests of a run) under the profiler, written to api-api-<route>.cpuprofile and
// api-bare-<route>.cpuprofile (bench/profile.ts): each server alone, so the two do not blur together. BENCH_ROUTE=<part of a name>: only those routes.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import Fastify, { type FastifyInstance } from 'fastify';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { LoadClient, type LoadRequest } from './http-load.ts';
import { startProfile } from './profile.ts';
import { checkTarget } from './target.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const PER_LANE = Number(process.env.BENCH_PER_LANE ?? 300);
const WARMUP_PER_LANE = Number(process.env.BENCH_WARMUP_PER_LANE ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LIST_PODS = Number(process.env.BENCH_LIST_PODS ?? 20);
const TARGET_RATIO = 0.8;

interface Scenario {
  name: string;
  request: LoadRequest;
  /** the bare route: the same answer, no hooks, no schemas */
  bare(app: FastifyInstance): void;
}

const profiled = process.env.BENCH_CPU_PROFILE;
const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** this thread's user + system CPU time in clock ticks of 10 ms (fields 14 and 15 of /proc/thread-self/stat) */
function threadCpuTicks(): number {
  const f = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function main(): Promise<void> {
  const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
  const client = new LoadClient();
  const bare = Fastify({ logger: false });
  try {
    await seedHosts(cp.services.store, [{ id: 'gpu-1', gpus: 8 }, { id: 'gpu-2', gpus: 8 }, { id: 'gpu-3', gpus: 8 }]);
    const { key } = await cp.newAccount('read_write', 1e6);
    const podBody = (i: number) => ({
      name: `bench-pod-${i}`,
      image: 'ghcr.io/example/trainer:2024.05',
      gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 },
      ports: ['8888/http', '22/tcp'],
      env: { MODEL: 'llama-3-8b', EPOCHS: '3', WANDB_PROJECT: 'bench' },
      mounts: { persistent: { size: 100, path: '/workspace' } },
      tags: { stack: 'bench' },
    });
    const ids: string[] = [];
    for (let i = 0; i < LIST_PODS; i++) {
      const res = await cp.api('/v2/pods', { method: 'POST', key, json: podBody(i) });
      const pod = (await res.json()) as { id: string };
      if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(pod)}`);
      ids.push(pod.id);
    }
    const get = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
      const res = await cp.api(path, { key, ...init });
      return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Record<string, unknown> };
    };
    const one = await get(`/v2/pods/${ids[0]}`);
    const list = await get('/v2/pods');
    // every schema failure at once: a wrong type, a value out of range, an unknown property
    const refusedBody = JSON.stringify({ ...podBody(999), gpu: { id: 'NVIDIA H100 80GB HBM3', count: 'two' }, disk: 0, colour: 'blue' });
    const refused = await get('/v2/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: refusedBody });
    if (refused.status !== 422) throw new Error(`refusal: ${refused.status} ${JSON.stringify(refused.body)}`);

    const scenarios: Scenario[] = [
      {
        name: 'GET /v2/pods/{id}',
        request: { method: 'GET', path: `/v2/pods/${ids[0]}`, expect: 200 },
        bare: (app) => app.get('/v2/pods/:id', async (request) => ({ ...one.body, id: (request.params as { id: string }).id })),
      },
      {
        name: `GET /v2/pods (${LIST_PODS} pods)`,
        request: { method: 'GET', path: '/v2/pods', expect: 200 },
        bare: (app) => app.get('/v2/pods', async () => ({ pods: [...(list.body.pods as unknown[])] })),
      },
      {
        name: 'POST /v2/pods refused (422)',
        request: { method: 'POST', path: '/v2/pods', body: refusedBody, expect: 422 },
        bare: (app) => app.post('/v2/pods', async (_request, reply) => reply.code(422).type(refused.type).send({ ...refused.body })),
      },
    ];
    for (const s of scenarios) s.bare(bare);
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const bareAddr = bare.server.address();
    const bareUrl = `http://127.0.0.1:${typeof bareAddr === 'object' && bareAddr ? bareAddr.port : 0}`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    // The servers run on this thread. Its CPU time per request (user + system, /proc/thread-self/stat)
    // is the server's cost, whatever the client or the machine's other load: capacity = 1 / that.
    // Its event-loop utilisation is printed beside it; on a loaded machine it also counts the time
    // the thread was runnable but not running, so it favours whichever side does less per request.
    const run = async (url: string, request: LoadRequest, n: number) => {
      const before = performance.eventLoopUtilization();
      const t0 = threadCpuTicks();
      const r = await client.run({ url, headers, concurrency: CONCURRENCY, lanes: Array.from({ length: CONCURRENCY }, () => Array.from({ length: n }, () => request)) });
      const cpuUs = ((threadCpuTicks() - t0) * 10_000) / r.done;
      const elu = performance.eventLoopUtilization(before).utilization;
      return { perSecond: r.perSecond, elu, cpuUs, cap: 1e6 / Math.max(cpuUs, 1e-3) };
    };

    // BENCH_ROUTE=<part of a name>: only the routes whose name contains it (a profile of one route)
    for (const s of scenarios.filter((x) => x.name.includes(process.env.BENCH_ROUTE ?? ''))) {
      await run(bareUrl, s.request, WARMUP_PER_LANE);
      await run(cp.url, s.request, WARMUP_PER_LANE);
      type Run = Awaited<ReturnType<typeof run>>;
      const api: Run[] = [];
      const base: Run[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 0) {
          base.push(await run(bareUrl, s.request, PER_LANE));
          api.push(await run(cp.url, s.request, PER_LANE));
        } else {
          api.push(await run(cp.url, s.request, PER_LANE));
          base.push(await run(bareUrl, s.request, PER_LANE));
        }
      }
      const ratio = median(api.map((a, i) => a.perSecond / base[i]!.perSecond));
      const capRatio = median(api.map((a, i) => a.cap / base[i]!.cap));
      console.log(
        `api: ${s.name}: ${median(api.map((a) => a.perSecond)).toFixed(0)} req/s, bare fastify ${median(base.map((b) => b.perSecond)).toFixed(0)} req/s ` +
          `(throughput ratio ${ratio.toFixed(2)}, client-bound on few cores); server CPU per request api ${median(api.map((a) => a.cpuUs)).toFixed(0)} µs, ` +
          `bare ${median(base.map((b) => b.cpuUs)).toFixed(0)} µs: capacity ratio ${capRatio.toFixed(2)}`,
      );
      console.error(
        `  ${CONCURRENCY} in flight, ${CONCURRENCY * PER_LANE} requests per run, ${ROUNDS} rounds; server busy (event-loop utilisation) api ${median(api.map((a) => a.elu)).toFixed(2)}, ` +
          `bare ${median(base.map((b) => b.elu)).toFixed(2)} (capacity per busy second ratio ${median(api.map((a, i) => (a.perSecond / a.elu) / (base[i]!.perSecond / base[i]!.elu))).toFixed(2)}); ` +
          `pair capacity ratios ${api.map((a, i) => (a.cap / base[i]!.cap).toFixed(2)).join(', ')}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`,
      );
      checkTarget({ name: `api server capacity vs bare Fastify, ${s.name}`, value: capRatio, op: '>=', floor: TARGET_RATIO, unit: '×' });
      // each server alone, after the measured rounds (one profile of both would blur them together)
      for (const [side, url] of profiled ? ([['api', cp.url], ['bare', bareUrl]] as const) : []) {
        const profile = await startProfile(profiled!.replace(/(\.cpuprofile)?$/, `-${side}-${slug(s.name)}.cpuprofile`));
        await run(url, s.request, PER_LANE * ROUNDS);
        await profile.stop();
      }
    }
  } finally {
    await client.close();
    await bare.close();
    await cp.close();
  }
}

await main();
