// Console session cost: GET /v2/pods/{id} authenticated by the web console's session cookie (the
// session read from the store, then its key's principal as it is now; docs/console.md) against the
// same request with the Bearer key, through the whole stack of one control plane. Same client, same
// run: the keep-alive load generator in a worker thread (bench/http-load.ts), CONCURRENCY in flight,
// warmed up first, ROUNDS rounds of a Bearer run and a cookie run back to back (order alternating).
// The floor is on the server's capacity ratio (requests per busy second of its thread): cookie ≥ 0.9×
// Bearer; the throughput ratio is printed beside it.
//   npx tsx bench/console-session.ts
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { LoadClient, type LoadRequest } from './http-load.ts';
import { checkTarget } from './target.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const PER_LANE = Number(process.env.BENCH_PER_LANE ?? 300);
const WARMUP_PER_LANE = Number(process.env.BENCH_WARMUP_PER_LANE ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TARGET_RATIO = 0.9;

async function main(): Promise<void> {
  const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
  const client = new LoadClient();
  try {
    await seedHosts(cp.services.store, [{ id: 'gpu-1', gpus: 8 }]);
    const { key } = await cp.newAccount('read_write');
    const res = await cp.api('/v2/pods', { method: 'POST', key, json: { name: 'bench-pod', image: 'ghcr.io/example/trainer:2024.05', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
    const pod = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(pod)}`);
    const signIn = await fetch(`${cp.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: key }) });
    if (signIn.status !== 204) throw new Error(`sign-in: ${signIn.status}`);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;

    const lanes = (n: number): LoadRequest[][] =>
      Array.from({ length: CONCURRENCY }, () => Array.from({ length: n }, () => ({ method: 'GET', path: `/v2/pods/${pod.id}`, expect: 200 })));
    const run = async (headers: Record<string, string>, n: number) => {
      const before = performance.eventLoopUtilization();
      const r = await client.run({ url: cp.url, headers, concurrency: CONCURRENCY, lanes: lanes(n) });
      const elu = performance.eventLoopUtilization(before).utilization;
      return { ...r, elu, cap: r.perSecond / Math.max(elu, 1e-6) };
    };
    const bearer = { authorization: `Bearer ${key}` };
    const session = { cookie };
    await run(bearer, WARMUP_PER_LANE);
    await run(session, WARMUP_PER_LANE);
    const b: Awaited<ReturnType<typeof run>>[] = [];
    const c: Awaited<ReturnType<typeof run>>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        b.push(await run(bearer, PER_LANE));
        c.push(await run(session, PER_LANE));
      } else {
        c.push(await run(session, PER_LANE));
        b.push(await run(bearer, PER_LANE));
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const ratio = median(c.map((x, i) => x.perSecond / b[i]!.perSecond));
    const capRatio = median(c.map((x, i) => x.cap / b[i]!.cap));
    console.log(`console-session: GET /v2/pods/{id} with the cookie ${median(c.map((x) => x.perSecond)).toFixed(0)} req/s, with the Bearer key ${median(b.map((x) => x.perSecond)).toFixed(0)} req/s; throughput ratio ${ratio.toFixed(2)}`);
    console.log(`console-session: server capacity ratio ${capRatio.toFixed(2)} (requests per busy second of the server thread); p50 cookie ${median(c.map((x) => x.p50)).toFixed(2)} ms, Bearer ${median(b.map((x) => x.p50)).toFixed(2)} ms`);
    checkTarget({ name: 'console session cookie vs Bearer key, server capacity', value: capRatio, op: '>=', floor: TARGET_RATIO, unit: '×' });
  } finally {
    await cp.close();
  }
}

await main();
