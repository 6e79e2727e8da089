// Scheduler throughput: 20,000 placements over 10,000 simulated hosts (BENCH_HOSTS) (8×H100, 4×A100, 2×RTX 4090 and
// CPU-only; five data centers; both tiers; three CUDA versions), with releases interleaved so the fleet
// stays about 70% full, which is where placement is hardest (many partly used hosts, and
// some requests failing and being diagnosed). Compared in the same run against a naive baseline that
// recomputes usage from the allocation list and scans every host per request, with the same best-fit
// rule. Both sides are timed over the same operations (the baseline over the first 2,000: it visits every host per request; placements and releases, in the same
// order) and must make identical decisions, which the bench checks before printing.
// Floor: ≥ 50,000 placements/s at 10,000 hosts.
//   npx tsx bench/scheduler.ts
import type { CloudTier, HostRecord } from '../model/index.ts';
import { type Allocation, type PlacementRequest, Scheduler, cudaKey, placeOnce } from '../fleet/index.ts';
import { checkTarget } from './target.ts';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 10_000);
const PLACEMENTS = 20_000;
/** the naive baseline scans every host per request: it runs this many of the same operations, and its decisions are compared over them */
const NAIVE_OPS = 2_000;
// pods kept alive (~70% of GPUs in use); above it, each placement is followed by a release
const LIVE_TARGET = Math.round(HOSTS * 1.4);
const TARGET_PER_S = 50_000;

const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100-SXM4-80GB';
const RTX4090 = 'NVIDIA GeForce RTX 4090';
const DCS = ['US-TX-1', 'US-CA-2', 'EU-RO-1', 'EU-SE-1', 'AP-JP-1'];

/** mulberry32: small seeded PRNG so every run simulates the same fleet and requests */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function makeHosts(r: () => number): HostRecord[] {
  const shapes = [
    { type: H100, gpus: 8, cpu: 192, mem: 2000 },
    { type: A100, gpus: 4, cpu: 64, mem: 512 },
    { type: RTX4090, gpus: 2, cpu: 32, mem: 128 },
    { type: null, gpus: 0, cpu: 64, mem: 256 },
  ];
  return Array.from({ length: HOSTS }, (_, i) => {
    const s = shapes[i % shapes.length]!;
    const id = `host-${String(i).padStart(5, '0')}`;
    const cloud: CloudTier = s.type === RTX4090 ? (r() < 0.7 ? 'COMMUNITY' : 'SECURE') : r() < 0.8 ? 'SECURE' : 'COMMUNITY';
    return {
      id, address: `10.0.${i >> 8}.${i & 255}`, port: 22, user: 'gpufleet', privateKeyEnc: '', hostKeySha256: 'SHA256:x',
      rejectedHostKeySha256: null, dataCenterId: pick(r, DCS), cloud, drained: r() < 0.02,
      status: r() < 0.02 ? 'UNREACHABLE' : 'READY', statusReason: null, missedHeartbeats: 0, lastSeenAt: null,
      createdAt: '2024-01-01T00:00:00Z',
      facts: {
        arch: 'x86_64', cpuCount: s.cpu, cpuModel: 'sim', memoryGb: s.mem, diskFreeGb: 4000, dockerVersion: '26.1.3',
        dockerRuntimes: ['nvidia', 'runc'], driverVersion: '550.54.15',
        cudaVersion: s.type ? pick(r, ['12.2', '12.4', '12.8']) : null,
        gpus: Array.from({ length: s.gpus }, (_, g) => ({ index: g, uuid: `${id}-GPU-${g}`, name: s.type!, memoryMiB: 81559, typeId: s.type })),
      },
    };
  });
}

function makeRequests(r: () => number): PlacementRequest[] {
  return Array.from({ length: PLACEMENTS }, (): PlacementRequest => {
    const x = r();
    const cloud = pick(r, ['ALL', 'ALL', 'SECURE', 'COMMUNITY'] as const);
    const dataCenterIds = r() < 0.3 ? [pick(r, DCS)] : undefined;
    if (x < 0.25) return { cpu: { flavorId: 'cpu3g', vcpuCount: pick(r, [2, 4, 8, 16]), memoryGb: 8 }, cloud, dataCenterIds, diskGb: 20 };
    const [typeIds, counts] =
      x < 0.55 ? [[H100], [1, 1, 2, 4, 8]] : x < 0.8 ? [[A100, H100], [1, 2, 4]] : [[RTX4090], [1, 1, 2]];
    // ~2% ask for what no host has (16 GPUs on one host, or CUDA 11.8), so the impossible path is timed too
    const count = r() < 0.01 ? 16 : pick(r, counts);
    return {
      gpu: { typeIds, count }, cloud, dataCenterIds, diskGb: 50, minVcpu: 4 * count, minMemoryGb: 32 * count,
      allowedCudaVersions: x > 0.99 ? ['11.8'] : r() < 0.15 ? ['12.4', '12.8'] : undefined,
    };
  });
}

// ---- naive baseline: no index; usage recomputed from the allocation list on every request ------------

function naivePlace(hosts: readonly HostRecord[], allocs: readonly Allocation[], req: PlacementRequest) {
  const taken = new Set<string>();
  const used = new Map<string, { v: number; m: number; d: number }>();
  for (const a of allocs) {
    for (const u of a.gpuUuids) taken.add(u);
    const x = used.get(a.hostId) ?? { v: 0, m: 0, d: 0 };
    x.v += a.vcpu; x.m += a.memoryGb; x.d += a.diskGb;
    used.set(a.hostId, x);
  }
  const vcpu = req.gpu ? req.minVcpu ?? 0 : Math.max(req.cpu!.vcpuCount, req.minVcpu ?? 0);
  const mem = req.gpu ? req.minMemoryGb ?? 0 : Math.max(req.cpu!.memoryGb, req.minMemoryGb ?? 0);
  const allowed = req.allowedCudaVersions?.map(cudaKey);
  type Cand = { h: HostRecord; ft: number; fg: number; fv: number; fm: number };
  const candidates = (typeId: string | null): Cand[] => {
    const out: Cand[] = [];
    for (const h of hosts) {
      if (h.status !== 'READY' || h.drained) continue;
      if (req.cloud !== 'ALL' && h.cloud !== req.cloud) continue;
      if (req.dataCenterIds && !req.dataCenterIds.includes(h.dataCenterId)) continue;
      if (allowed && !allowed.includes(cudaKey(h.facts.cudaVersion))) continue;
      const u = used.get(h.id) ?? { v: 0, m: 0, d: 0 };
      const fv = h.facts.cpuCount - u.v, fm = h.facts.memoryGb - u.m;
      if (fv < vcpu || fm < mem || h.facts.diskFreeGb - u.d < req.diskGb) continue;
      const free = h.facts.gpus.filter((g) => !taken.has(g.uuid));
      const ft = typeId === null ? 0 : free.filter((g) => g.typeId === typeId).length;
      if (typeId !== null && ft < req.gpu!.count) continue;
      out.push({ h, ft, fg: free.length, fv, fm });
    }
    return out;
  };
  const best = (cs: Cand[]): Cand | undefined =>
    cs.sort((a, b) => a.ft - b.ft || a.fg - b.fg || a.fv - b.fv || a.fm - b.fm || (a.h.id < b.h.id ? -1 : 1))[0];
  if (req.gpu) {
    for (const t of req.gpu.typeIds) {
      const c = best(candidates(t));
      if (c) {
        const uuids = c.h.facts.gpus.filter((g) => g.typeId === t && !taken.has(g.uuid)).slice(0, req.gpu.count).map((g) => g.uuid);
        return { ok: true as const, hostId: c.h.id, gpuUuids: uuids, vcpu, mem };
      }
    }
    return { ok: false as const };
  }
  const all = candidates(null);
  const c = best(all.filter((x) => x.h.facts.gpus.length === 0)) ?? best(all);
  return c ? { ok: true as const, hostId: c.h.id, gpuUuids: [], vcpu, mem } : { ok: false as const };
}

// ---- drivers: the same op sequence for both; returns the decision log for the equality check --------

type Decision = string;

function runScheduler(
  hosts: HostRecord[],
  reqs: PlacementRequest[],
  n: number,
): { ms: number; log: Decision[]; refused: Record<'busy' | 'impossible', number> } {
  const refused = { busy: 0, impossible: 0 };
  const r = rng(7);
  const s = new Scheduler(hosts);
  const live: string[] = [];
  const log: Decision[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const res = s.place(reqs[i]!, `pod-${i}`);
    if (res.ok) live.push(`pod-${i}`);
    else refused[res.reason]++;
    // the decisions compared with the baseline's, and only those: the bench's bookkeeping is not the scheduler's time
    if (i < NAIVE_OPS) log.push(res.ok ? `${res.hostId}:${res.gpuUuids.join(',')}` : '-');
    if (live.length > LIVE_TARGET) {
      const k = Math.floor(r() * live.length);
      s.release(live[k]!);
      live[k] = live[live.length - 1]!;
      live.pop();
    }
  }
  return { ms: performance.now() - t0, log, refused };
}

function runNaive(hosts: HostRecord[], reqs: PlacementRequest[], n: number): { ms: number; log: Decision[] } {
  const r = rng(7);
  const allocs: Allocation[] = [];
  const log: Decision[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const req = reqs[i]!;
    const res = naivePlace(hosts, allocs, req);
    if (res.ok) allocs.push({ podId: `pod-${i}`, hostId: res.hostId, gpuUuids: res.gpuUuids, vcpu: res.vcpu, memoryGb: res.mem, diskGb: req.diskGb });
    log.push(res.ok ? `${res.hostId}:${res.gpuUuids.join(',')}` : '-');
    if (allocs.length > LIVE_TARGET) {
      const k = Math.floor(r() * allocs.length);
      allocs[k] = allocs[allocs.length - 1]!;
      allocs.pop();
    }
  }
  return { ms: performance.now() - t0, log };
}

const hosts = makeHosts(rng(1));
const reqs = makeRequests(rng(2));

runScheduler(hosts, reqs, PLACEMENTS); // warm-up (JIT)
// the median of nine runs (one is about 0.3 s: a neighbour's burst or a collection skews single runs), each printed
const runs = Array.from({ length: 9 }, () => runScheduler(hosts, reqs, PLACEMENTS)).sort((a, b) => a.ms - b.ms);
console.log(`  runs (ms): ${runs.map((r) => r.ms.toFixed(0)).join(' ')}`);
const fast = runs[Math.floor(runs.length / 2)]!;
runNaive(hosts, reqs, 200); // warm-up (JIT)
const naive = runNaive(hosts, reqs, NAIVE_OPS); // the first NAIVE_OPS of the same operations (seconds)

if (naive.log.length !== NAIVE_OPS) throw new Error('the baseline ran a different operation count');
const mismatch = naive.log.findIndex((d, i) => d !== fast.log[i]);
if (mismatch >= 0) {
  console.error(`decision mismatch at op ${mismatch}: scheduler ${fast.log[mismatch]} vs naive ${naive.log[mismatch]}`);
  process.exit(1);
}

// placeOnce rebuilds the index per call: what a caller pays for not keeping a Scheduler around
const ONCE_N = 500;
const onceState = new Scheduler(hosts);
for (let i = 0; i < 3000; i++) onceState.place(reqs[i]!, `seed-${i}`);
const seeded = onceState.allocations();
const t1 = performance.now();
for (let i = 0; i < ONCE_N; i++) placeOnce(hosts, seeded, reqs[i]!);
const onceRate = ONCE_N / ((performance.now() - t1) / 1000);

const rate = PLACEMENTS / (fast.ms / 1000);
const naiveRate = NAIVE_OPS / (naive.ms / 1000);
const { busy, impossible } = fast.refused;

console.log(
  `scheduler: ${PLACEMENTS} placements in ${fast.ms.toFixed(1)} ms = ${Math.round(rate)}/s ` +
    `(median of ${runs.length} runs); naive baseline over the first ${NAIVE_OPS} ops ${(naive.ms / 1000).toFixed(2)} s = ${Math.round(naiveRate)}/s ` +
    `(speedup ${(rate / naiveRate).toFixed(1)}x)`,
);
console.log(
  `  ${HOSTS} hosts, ~${LIVE_TARGET} live pods, ${PLACEMENTS - busy - impossible} placed, ${busy} busy, ${impossible} impossible (diagnosed); ` +
    `decisions identical to the baseline over the first ${NAIVE_OPS} ops; placeOnce (index rebuilt per call, ${seeded.length} allocations): ${Math.round(onceRate)}/s`,
);
checkTarget({ name: `scheduler placements/s (${HOSTS.toLocaleString('en-US')} hosts, ~70% full)`, value: rate, op: '>=', floor: TARGET_PER_S, unit: '/s', digits: 0 });
