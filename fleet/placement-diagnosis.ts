// Why a placement failed. Runs only after the fast path found nothing, so it may be O(hosts × stages).
// First pass: the fleet as if empty, one constraint at a time; the stage that removes the last candidate
// names the failure 'impossible'. Hardware stages (GPU type, count) come before location stages, so a
// request for a type the fleet lacks says "gpu-type" rather than blaming whichever data center it named.
// If hosts survive, the request could run: the failure is 'busy', blamed on host status (drained or
// unreachable hosts could take it back) or on whichever resource is taken now.
import {
  type CompiledRequest,
  type HostState,
  type PlacementConstraint,
  type PlacementFailure,
  hasCpuMemoryCapacity,
  hasDiskCapacity,
  hasFreeCpuMemory,
  hasFreeDisk,
  hasFreeGpus,
  hasGpuCount,
  hasGpuType,
  matchesCloud,
  matchesCuda,
  matchesDataCenter,
} from './placement.ts';
import type { HostExclusion } from './placement-plan.ts';

type Stage = {
  constraint: PlacementConstraint;
  keep: (h: HostState, c: CompiledRequest) => boolean;
  why: (survivors: HostState[], c: CompiledRequest) => string;
  /** what of the request `keep` reads (static stages): the key under which its survivors may be kept */
  reads?: (c: CompiledRequest) => unknown;
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const typeList = (c: CompiledRequest): string => c.typeIds.join(' | ') || '(none)';
const distinct = (xs: Iterable<string>): string => [...new Set(xs)].sort().join(', ');

const gpuStages: Stage[] = [
  {
    constraint: 'gpu-type',
    keep: hasGpuType,
    reads: (c) => c.typeIds,
    why: (_, c) => `no enrolled host has a GPU of type ${typeList(c)}`,
  },
  {
    constraint: 'gpu-count',
    keep: hasGpuCount,
    reads: (c) => c.count,
    why: (hs, c) => {
      const most = Math.max(0, ...hs.map((h) => Math.max(0, ...c.typeIds.map((t) => h.typeTotal.get(t) ?? 0))));
      return `no host has ${c.count} GPUs of type ${typeList(c)}; the most on one host is ${most}`;
    },
  },
];

const commonStages: Stage[] = [
  {
    constraint: 'cloud',
    keep: matchesCloud,
    reads: (c) => c.req.cloud,
    why: (hs, c) => `none of the ${plural(hs.length, 'host')} with the requested hardware is in the ${c.req.cloud} cloud`,
  },
  {
    constraint: 'data-center',
    keep: matchesDataCenter,
    reads: (c) => (c.dcs ? [...c.dcs].sort() : null),
    why: (hs, c) =>
      `none of the ${plural(hs.length, 'host')} that fit is in data center ${[...(c.dcs ?? [])].join(', ')} ` +
      `(they are in ${distinct(hs.map((h) => h.host.dataCenterId))})`,
  },
  {
    constraint: 'cuda-version',
    keep: matchesCuda,
    reads: (c) => [c.cudaAllowed ? [...c.cudaAllowed].sort() : null, c.cudaMin],
    why: (hs, c) => {
      const wanted = [
        c.req.allowedCudaVersions?.length ? `one of ${c.req.allowedCudaVersions.join(', ')}` : '',
        c.req.minCudaVersion ? `at least ${c.req.minCudaVersion}` : '',
      ].filter(Boolean);
      return `none of the ${plural(hs.length, 'host')} that fit has CUDA ${wanted.join(' and ')} ` +
        `(they have ${distinct(hs.map((h) => h.host.facts.cudaVersion ?? 'none'))})`;
    },
  },
  {
    constraint: 'cpu-memory',
    keep: hasCpuMemoryCapacity,
    reads: (c) => [c.vcpu, c.memGb],
    why: (hs, c) =>
      `no host that fits has ${c.vcpu} vCPUs and ${c.memGb} GB memory ` +
      `(largest: ${Math.max(0, ...hs.map((h) => h.host.facts.cpuCount))} vCPUs, ${Math.max(0, ...hs.map((h) => h.host.facts.memoryGb))} GB)`,
  },
  {
    constraint: 'disk',
    keep: hasDiskCapacity,
    reads: (c) => c.diskGb,
    why: (hs, c) =>
      `no host that fits has ${c.diskGb} GB of disk (largest: ${Math.max(0, ...hs.map((h) => h.host.facts.diskFreeGb))} GB)`,
  },
];

const busyStages: Stage[] = [
  {
    constraint: 'gpu-count',
    keep: hasFreeGpus,
    why: (hs, c) => `all ${plural(hs.length, 'host')} that could run it have fewer than ${c.count} free GPUs of type ${typeList(c)}`,
  },
  {
    constraint: 'cpu-memory',
    keep: hasFreeCpuMemory,
    why: (hs, c) => `all ${plural(hs.length, 'host')} that could run it have fewer than ${c.vcpu} free vCPUs or ${c.memGb} GB free memory`,
  },
  {
    constraint: 'disk',
    keep: hasFreeDisk,
    why: (hs, c) => `all ${plural(hs.length, 'host')} that could run it have less than ${c.diskGb} GB of free disk`,
  },
];

const fail = (reason: 'impossible' | 'busy', constraint: PlacementConstraint, detail: string): PlacementFailure => ({
  ok: false,
  reason,
  constraint,
  detail,
});

/**
 * Runs the stages in order over `cand` in one pass: each host is tested until its first failing stage.
 * Answers the first stage that leaves no host and the hosts that reached it (what its `why` describes),
 * or, when every stage keeps someone, the hosts that passed them all.
 */
function runStages(cand: readonly HostState[], stages: readonly Stage[], c: CompiledRequest): { failed: Stage | null; hosts: HostState[] } {
  const passed = new Uint8Array(cand.length);
  let most = 0;
  for (let i = 0; i < cand.length; i++) {
    const h = cand[i]!;
    let k = 0;
    while (k < stages.length && stages[k]!.keep(h, c)) k++;
    passed[i] = k;
    if (k > most) most = k;
  }
  const hosts = cand.filter((_, i) => passed[i]! >= most);
  return { failed: most < stages.length ? stages[most]! : null, hosts };
}

/**
 * The part of a diagnosis that depends only on what hosts are (facts, tier, data center), not on what
 * runs on them: either the 'impossible' failure, or the hosts that could run the request were they
 * empty. A scheduler may keep it while its hosts do not change.
 */
export type StaticFit = { failure: PlacementFailure; hosts?: undefined } | { failure?: undefined; hosts: readonly HostState[] };

/**
 * What a scheduler keeps of static diagnoses while its hosts do not change: the hosts left after each
 * prefix of the static stages, under a key of what those stages read of the request. Requests that
 * differ late in the chain share the filtering of its start.
 */
export type StaticMemo = Map<string, HostState[]>;
const MEMO_LIMIT = 50_000;

/** The static stages in order, each filtering what the last kept (kept in `memo` per request prefix). */
function runStaticStages(cand: readonly HostState[], stages: readonly Stage[], c: CompiledRequest, memo: StaticMemo): { failed: Stage | null; hosts: HostState[] } {
  let key = c.count > 0 ? 'gpu' : 'cpu';
  let hosts = cand as HostState[];
  for (const stage of stages) {
    key += `|${JSON.stringify(stage.reads!(c))}`;
    let next = memo.get(key);
    if (!next) {
      if (memo.size >= MEMO_LIMIT) memo.clear();
      next = hosts.filter((h) => stage.keep(h, c));
      memo.set(key, next);
    }
    if (next.length === 0) return { failed: stage, hosts };
    hosts = next;
  }
  return { failed: null, hosts };
}

export function staticFit(all: readonly HostState[], c: CompiledRequest, memo?: StaticMemo): StaticFit {
  if (!c.flavorKnown) return { failure: fail('impossible', 'cpu-flavor', `unknown CPU flavor ${c.req.cpu?.flavorId ?? ''}`) };
  if (all.length === 0) return { failure: fail('impossible', 'no-hosts', 'no hosts are enrolled') };
  let cand: readonly HostState[] = all;
  const pin = c.req.pinnedHostId;
  if (pin !== undefined) {
    cand = cand.filter((h) => h.host.id === pin);
    if (cand.length === 0) return { failure: fail('impossible', 'pinned-host', `host ${pin} is not enrolled`) };
  }
  const stages = c.count > 0 ? [...gpuStages, ...commonStages] : commonStages;
  // a pinned request looks at one host: nothing worth keeping
  const fit = memo && pin === undefined ? runStaticStages(cand, stages, c, memo) : runStages(cand, stages, c);
  return fit.failed ? { failure: fail('impossible', fit.failed.constraint, fit.failed.why(fit.hosts, c)) } : { hosts: fit.hosts };
}

/** Why hosts that could run the request (`staticFit`'s) cannot now: status, then what is taken. */
export function busyDiagnosis(fit: readonly HostState[], c: CompiledRequest): PlacementFailure {
  const up = fit.filter((h) => h.schedulable);
  if (up.length === 0) {
    const states = distinct(fit.map((h) => (h.host.drained ? 'drained' : h.host.status)));
    return fail('busy', 'host-status', `the ${plural(fit.length, 'host')} that could run it are not accepting pods (${states})`);
  }
  const free = runStages(up, c.count > 0 ? busyStages : busyStages.slice(1), c);
  if (free.failed) return fail('busy', free.failed.constraint, free.failed.why(free.hosts, c));
  // Each stage passed on its own but no single host passed all at once for one GPU type.
  return fail('busy', c.count > 0 ? 'gpu-count' : 'cpu-memory', 'no single host has all the requested resources free right now');
}

/** Explain why no host was chosen. `all` is every enrolled host (or every one a first stage would keep), schedulable or not. */
export function diagnosePlacement(all: readonly HostState[], c: CompiledRequest): PlacementFailure {
  const fit = staticFit(all, c);
  return fit.failure ?? busyDiagnosis(fit.hosts, c);
}

/**
 * Which constraint excludes each host of `all`: the first stage it fails, in the diagnosis's order
 * (pin, hardware, location, status, then what is taken now), grouped by constraint (groups in the
 * diagnosis's order, hosts in id order) with up to `shown` host ids each. For a refusal only: it visits every host.
 */
export function hostExclusions(all: readonly HostState[], c: CompiledRequest, failure: PlacementFailure, shown: number): HostExclusion[] {
  const groups = new Map<PlacementConstraint, HostExclusion>();
  const add = (constraint: PlacementConstraint, hostId: string) => {
    let g = groups.get(constraint);
    if (!g) groups.set(constraint, (g = { constraint, hostCount: 0, hostIds: [] }));
    g.hostCount++;
    if (g.hostIds.length < shown) g.hostIds.push(hostId);
  };
  const statics = c.count > 0 ? [...gpuStages, ...commonStages] : commonStages;
  const busy = c.count > 0 ? busyStages : busyStages.slice(1);
  for (const h of [...all].sort((a, b) => (a.host.id < b.host.id ? -1 : a.host.id > b.host.id ? 1 : 0))) {
    if (!c.flavorKnown) add('cpu-flavor', h.host.id);
    else if ((c.req.pinnedHostId !== undefined && h.host.id !== c.req.pinnedHostId) || c.req.avoidHostIds?.includes(h.host.id)) add('pinned-host', h.host.id);
    else {
      const stage = statics.find((s) => !s.keep(h, c)) ?? (h.schedulable ? busy.find((s) => !s.keep(h, c)) : null);
      add(stage ? stage.constraint : h.schedulable ? failure.constraint : 'host-status', h.host.id);
    }
  }
  return [...groups.values()].sort((a, b) => EXCLUSION_ORDER.indexOf(a.constraint) - EXCLUSION_ORDER.indexOf(b.constraint));
}

/** the order a refusal lists its groups in: the diagnosis's, hardware first */
const EXCLUSION_ORDER: readonly PlacementConstraint[] = [
  'no-hosts', 'cpu-flavor', 'pinned-host', 'gpu-type', 'gpu-count', 'cloud', 'data-center', 'cuda-version', 'cpu-memory', 'disk', 'host-status',
];
