// GraphQL overhead: runpod-python's get_pod document (`pod(input: {podId})` with its whole field set)
// against the REST baseline `GET /v2/pods/{id}`, same server, same pod, same key, in the same run.
// After a warmup, N sequential keep-alive requests per side, interleaved in short alternating blocks
// so both sides see the same machine load (other processes make a single long run noisy); the rate is
// requests over the summed time of each side's blocks, and the median per-block ratio is shown too.
// Floor: GraphQL ≥ 0.5× REST.
//   npx tsx bench/graphql.ts [N]
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { checkTarget } from './target.ts';

const N = Number(process.argv[2] ?? 3000);
const WARMUP = 1000;
const BLOCKS = 30;
const TARGET_RATIO = 0.5;

const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000' });
try {
  await seedHosts(cp.services.store, [{ id: 'bench-host', gpus: 8 }]);
  const { key } = await cp.newAccount('read_write');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await cp.api('/v2/pods', { method: 'POST', key, json: { name: 'bench', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 }, ports: ['8888/http', '22/tcp'], env: { A: '1' } } });
  if (created.status !== 201) throw new Error(`pod create failed: ${created.status} ${await created.text()}`);
  const podId = ((await created.json()) as { id: string }).id;

  const query = `query pod { pod(input: {podId: "${podId}"}) { id containerDiskInGb costPerHr desiredStatus dockerArgs dockerId env gpuCount imageName lastStatusChange
    machineId memoryInGb name podType port ports uptimeSeconds vcpuCount volumeInGb volumeMountPath
    runtime { ports { ip isIpPublic privatePort publicPort type } } machine { gpuDisplayName } } }`;
  const gqlBody = JSON.stringify({ query });

  const graphql = async () => {
    const res = await fetch(`${cp.url}/graphql`, { method: 'POST', headers, body: gqlBody });
    const body = (await res.json()) as { data?: { pod?: { id: string } }; errors?: unknown };
    if (res.status !== 200 || body.data?.pod?.id !== podId) throw new Error(`graphql answered ${res.status} ${JSON.stringify(body)}`);
  };
  const rest = async () => {
    const res = await fetch(`${cp.url}/v2/pods/${podId}`, { headers });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 200 || body.id !== podId) throw new Error(`REST answered ${res.status} ${JSON.stringify(body)}`);
  };
  const timed = async (fn: () => Promise<void>, n: number) => {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    return performance.now() - t;
  };

  await timed(graphql, WARMUP);
  await timed(rest, WARMUP);
  const per = Math.ceil(N / BLOCKS);
  let gMs = 0;
  let rMs = 0;
  const ratios: number[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    // alternate which side goes first so neither always runs right after the other
    let gb: number;
    let rb: number;
    if (b % 2 === 0) {
      gb = await timed(graphql, per);
      rb = await timed(rest, per);
    } else {
      rb = await timed(rest, per);
      gb = await timed(graphql, per);
    }
    gMs += gb;
    rMs += rb;
    ratios.push(rb / gb);
  }
  const total = per * BLOCKS;
  const gql = total / (gMs / 1000);
  const base = total / (rMs / 1000);
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
  console.log(`graphql pod(input): ${Math.round(gql)} req/s; REST GET /v2/pods/{id}: ${Math.round(base)} req/s; ratio X/Y = ${(gql / base).toFixed(2)}`);
  console.log(`  ${total} sequential keep-alive requests per side in ${BLOCKS} alternating blocks after ${WARMUP} warmup each; median block ratio ${median.toFixed(2)}`);
  checkTarget({ name: 'GraphQL pod(input) vs REST GET /v2/pods/{id}', value: gql / base, op: '>=', floor: TARGET_RATIO, unit: '×' });
} finally {
  await cp.close();
}
