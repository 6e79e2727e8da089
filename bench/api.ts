// API overhead: GET /v2/pods/{id} through the whole stack (request guard: rate limit + API key +
// scope; the pod service; the Pod view; problem handlers; RateLimit headers) against a bare Fastify
// route that returns a similar JSON object (the same pod view) with no hooks. Same client, same run:
// a keep-alive HTTP load generator in a worker thread (bench/http-load.ts), CONCURRENCY requests in
// flight, warmed up first. ROUNDS rounds, each a bare run and an API run back to back (the order
// alternating), so a pair sees the same machine load; the ratio is the median of the pairs' ratios,
// the rates the medians of each side. The floor is on the servers' capacity ratio (requests per busy
// second of the server thread): API ≥ 0.8× bare Fastify; the raw throughput ratio is printed beside it.
//   npx tsx bench/api.ts
import Fastify from 'fastify';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { runLoad, type LoadRequest } from './http-load.ts';
import { startProfile } from './profile.ts';
import { checkTarget } from './target.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const PER_LANE = Number(process.env.BENCH_PER_LANE ?? 500);
const WARMUP_PER_LANE = Number(process.env.BENCH_WARMUP_PER_LANE ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TARGET_RATIO = 0.8;

async function main(): Promise<void> {
  const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
  const bare = Fastify({ logger: false });
  try {
    await seedHosts(cp.services.store, [{ id: 'gpu-1', gpus: 8 }]);
    const { key } = await cp.newAccount('read_write');
    const res = await cp.api('/v2/pods', {
      method: 'POST',
      key,
      json: {
        name: 'bench-pod',
        image: 'ghcr.io/example/trainer:2024.05',
        gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 },
        ports: ['8888/http', '22/tcp'],
        env: { MODEL: 'llama-3-8b', EPOCHS: '3', WANDB_PROJECT: 'bench' },
        mounts: { persistent: { size: 100, path: '/workspace' } },
      },
    });
    const pod = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(pod)}`);

    // the bare route answers the same view, built per request like the real one
    const view = structuredClone(pod);
    bare.get('/v2/pods/:id', async (request) => ({ ...view, id: (request.params as { id: string }).id }));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const bareAddr = bare.server.address();
    const bareUrl = `http://127.0.0.1:${typeof bareAddr === 'object' && bareAddr ? bareAddr.port : 0}`;

    const headers = { authorization: `Bearer ${key}` };
    const lanes = (n: number): LoadRequest[][] =>
      Array.from({ length: CONCURRENCY }, () => Array.from({ length: n }, () => ({ method: 'GET', path: `/v2/pods/${pod.id}`, expect: 200 })));
    // the servers run on this thread: its event-loop utilisation during a run says how busy the
    // server was, so `perBusySecond` is the server's capacity even when the client is the limit
    const run = async (url: string, n: number) => {
      const before = performance.eventLoopUtilization();
      const r = await runLoad({ url, headers, concurrency: CONCURRENCY, lanes: lanes(n) });
      const elu = performance.eventLoopUtilization(before).utilization;
      return { ...r, elu, perBusySecond: r.perSecond / Math.max(elu, 1e-6) };
    };

    await run(bareUrl, WARMUP_PER_LANE);
    await run(cp.url, WARMUP_PER_LANE);
    const apiRates: number[] = [];
    const bareRates: number[] = [];
    const apiBusy: { elu: number; cap: number }[] = [];
    const bareBusy: { elu: number; cap: number }[] = [];
    const side = async (url: string, rates: number[], busy: { elu: number; cap: number }[]) => {
      const r = await run(url, PER_LANE);
      rates.push(r.perSecond);
      busy.push({ elu: r.elu, cap: r.perBusySecond });
    };
    const profile = await startProfile(process.env.BENCH_CPU_PROFILE);
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        await side(bareUrl, bareRates, bareBusy);
        await side(cp.url, apiRates, apiBusy);
      } else {
        await side(cp.url, apiRates, apiBusy);
        await side(bareUrl, bareRates, bareBusy);
      }
    }
    await profile.stop();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const x = median(apiRates);
    const y = median(bareRates);
    const ratio = median(apiRates.map((a, i) => a / bareRates[i]!));
    const capRatio = median(apiBusy.map((b, i) => b.cap / bareBusy[i]!.cap));
    console.log(`api: GET /v2/pods/{id} ${x.toFixed(0)} req/s; bare fastify ${y.toFixed(0)} req/s; throughput ratio ${ratio.toFixed(2)} (client-bound on few cores; no floor)`);
    // when the client cannot saturate the servers (few cores) the raw ratio flatters the API; the
    // servers' own capacity (requests per second of event-loop busy time) does not depend on it
    console.log(`api: server capacity ratio ${capRatio.toFixed(2)} (requests per busy second of the server thread)`);
    console.error(
      `  ${CONCURRENCY} in flight, ${CONCURRENCY * PER_LANE} requests per round, ${ROUNDS} rounds; ` +
        `server busy (event-loop utilisation) api ${median(apiBusy.map((b) => b.elu)).toFixed(2)}, bare ${median(bareBusy.map((b) => b.elu)).toFixed(2)}; ` +
        `capacity per busy second api ${median(apiBusy.map((b) => b.cap)).toFixed(0)}, bare ${median(bareBusy.map((b) => b.cap)).toFixed(0)}; ` +
        `pair ratios ${apiRates.map((a, i) => (a / bareRates[i]!).toFixed(2)).join(', ')}; api rounds ${apiRates.map((v) => v.toFixed(0)).join(', ')}; bare rounds ${bareRates.map((v) => v.toFixed(0)).join(', ')}`,
    );
    checkTarget({ name: 'api server capacity vs bare Fastify', value: capRatio, op: '>=', floor: TARGET_RATIO, unit: '×' });
  } finally {
    await bare.close();
    await cp.close();
  }
}

await main();
