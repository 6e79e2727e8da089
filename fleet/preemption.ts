// Preemption (docs/teams.md "Interruptible pods"): when a request fits nowhere as the fleet is, which
// interruptible pods would have to give their GPUs back for it. Only a request that found nothing free
// comes here (the scheduler's hot path never does), and only pods bidding less than the request's
// `preemptBelow` may be taken (every interruptible pod for an on-demand request).
//
// The choice, per host: its candidates in order (lowest bid first, then the most recently started),
// each taken only while it helps (it holds GPUs of the type still missing, or vCPU, memory or disk
// still short), then any taken one the rest can do without is handed back (the highest bid first), so
// the host's set disturbs as few pods as it can. Across hosts: the lowest highest bid taken, then the
// fewest pods, then the most recently started, then the scheduler's host preference. The lowest
// highest bid is also what `minimumBid` reports: a bid just above it places.
import { type Allocation, type CompiledRequest, type GpuSlot, type HostState, staticOk } from './placement.ts';
import { preference } from './sorted-hosts.ts';

export interface Preemption {
  h: HostState;
  typeId: string;
  /** the GPUs the request gets: free ones and the victims', lowest index first */
  slots: GpuSlot[];
  /** the pods that leave the host, in the order they were chosen */
  victims: Allocation[];
  /** the highest bid among the victims */
  maxBid: number;
}

/** Victim order: lowest bid first, then the most recently started, then pod id (the same state, the same answer). */
function victimOrder(a: Allocation, b: Allocation): number {
  if (a.bid! !== b.bid!) return a.bid! - b.bid!;
  const sa = a.startedAtMs ?? 0;
  const sb = b.startedAtMs ?? 0;
  if (sa !== sb) return sb - sa;
  return a.podId < b.podId ? -1 : a.podId > b.podId ? 1 : 0;
}

interface Shortfall {
  gpus: number;
  vcpu: number;
  memGb: number;
  diskGb: number;
}

const covered = (s: Shortfall) => s.gpus <= 0 && s.vcpu <= 0 && s.memGb <= 0 && s.diskGb <= 0;

function gpusOf(a: Allocation, h: HostState, typeId: string): number {
  let n = 0;
  for (const s of h.slots) if (s.podId === a.podId && s.typeId === typeId) n++;
  return n;
}

/** Whether giving back `a` reduces what is still short. */
function helps(a: Allocation, gpus: number, s: Shortfall): boolean {
  return (s.gpus > 0 && gpus > 0) || (s.vcpu > 0 && a.vcpu > 0) || (s.memGb > 0 && a.memoryGb > 0) || (s.diskGb > 0 && a.diskGb > 0);
}

function take(s: Shortfall, a: Allocation, gpus: number, sign: 1 | -1): void {
  s.gpus -= sign * gpus;
  s.vcpu -= sign * a.vcpu;
  s.memGb -= sign * a.memoryGb;
  s.diskGb -= sign * a.diskGb;
}

/** The fewest, cheapest pods on `h` whose GPUs of `typeId` and room would let the request in; null when none would. */
function victimsOn(h: HostState, c: CompiledRequest, typeId: string, candidates: readonly Allocation[]): Allocation[] | null {
  if ((h.typeTotal.get(typeId) ?? 0) < c.count) return null;
  const short: Shortfall = {
    gpus: c.count - (h.typeFree.get(typeId) ?? 0),
    vcpu: c.vcpu - h.freeVcpu,
    memGb: c.memGb - h.freeMemGb,
    diskGb: c.diskGb - h.freeDiskGb,
  };
  const chosen: { a: Allocation; gpus: number }[] = [];
  for (const a of candidates) {
    if (covered(short)) break;
    const gpus = gpusOf(a, h, typeId);
    if (!helps(a, gpus, short)) continue;
    take(short, a, gpus, 1);
    chosen.push({ a, gpus });
  }
  if (!covered(short)) return null;
  // hand back what the rest can do without, the highest bid first
  for (let i = chosen.length - 1; i >= 0; i--) {
    const { a, gpus } = chosen[i]!;
    take(short, a, gpus, -1);
    if (covered(short)) chosen.splice(i, 1);
    else take(short, a, gpus, 1);
  }
  return chosen.map((x) => x.a);
}

/** a better than b: lower highest bid, fewer pods, more recently started, then host preference */
function better(a: Preemption, b: Preemption): boolean {
  if (a.maxBid !== b.maxBid) return a.maxBid < b.maxBid;
  if (a.victims.length !== b.victims.length) return a.victims.length < b.victims.length;
  const la = Math.max(...a.victims.map((v) => v.startedAtMs ?? 0));
  const lb = Math.max(...b.victims.map((v) => v.startedAtMs ?? 0));
  if (la !== lb) return la > lb;
  return preference(a.h, b.h) < 0;
}

/**
 * The best preemption for a compiled GPU request among `hosts`, or null when no set of interruptible
 * pods bidding less than `c.req.preemptBelow` would make room. Records nothing.
 */
export function findPreemption(hosts: readonly HostState[], c: CompiledRequest, allocation: (podId: string) => Allocation | undefined): Preemption | null {
  const below = c.req.preemptBelow;
  if (below === undefined || c.count === 0 || !c.flavorKnown) return null;
  let best: Preemption | null = null;
  for (const h of hosts) {
    if (!h.schedulable || !staticOk(h, c)) continue;
    const candidates: Allocation[] = [];
    for (const podId of h.pods) {
      const a = allocation(podId);
      if (a && a.bid !== undefined && a.bid < below) candidates.push(a);
    }
    if (candidates.length === 0) continue;
    candidates.sort(victimOrder);
    for (const typeId of c.typeIds) {
      const victims = victimsOn(h, c, typeId, candidates);
      if (!victims || victims.length === 0) continue;
      const leaving = new Set(victims.map((v) => v.podId));
      const slots: GpuSlot[] = [];
      for (const s of h.slots) {
        if (s.typeId === typeId && (s.podId === null || leaving.has(s.podId))) slots.push(s);
        if (slots.length === c.count) break;
      }
      const p: Preemption = { h, typeId, slots, victims, maxBid: Math.max(...victims.map((v) => v.bid!)) };
      if (!best || better(p, best)) best = p;
      break; // types in priority order: the first that works on this host is its offer
    }
  }
  return best;
}
