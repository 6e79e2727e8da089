// Hosts kept in the scheduler's preference order (fewest free GPUs, then vCPUs, then memory, then id),
// so the best fitting host is the first one that fits: a scan stops at its first hit instead of
// visiting every host. Positions are found by binary search; a host must be removed before its free
// counts change and inserted again after (Scheduler.withReindex).
import { type CompiledRequest, type HostState, roomOk, staticOk } from './placement.ts';

/** whether a host may take the request and has room for it now (its GPUs are the bucket's business) */
export const fits = (h: HostState, c: CompiledRequest): boolean => staticOk(h, c) && roomOk(h, c);

/** <0 when a is preferred to b; the order `better` in scheduler.ts states */
export function preference(a: HostState, b: HostState): number {
  if (a.freeGpus !== b.freeGpus) return a.freeGpus - b.freeGpus;
  if (a.freeVcpu !== b.freeVcpu) return a.freeVcpu - b.freeVcpu;
  if (a.freeMemGb !== b.freeMemGb) return a.freeMemGb - b.freeMemGb;
  return a.host.id < b.host.id ? -1 : a.host.id > b.host.id ? 1 : 0;
}

export class SortedHosts {
  private readonly items: HostState[] = [];

  get size(): number {
    return this.items.length;
  }

  add(h: HostState): void {
    const i = this.position(h);
    if (this.items[i] !== h) this.items.splice(i, 0, h);
  }

  delete(h: HostState): void {
    const i = this.position(h);
    if (this.items[i] === h) this.items.splice(i, 1);
  }

  /** where `h` is, or goes: the first index whose host is not preferred to it */
  private position(h: HostState): number {
    const items = this.items;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (preference(items[mid]!, h) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The first host in preference order that `fits` the request: hosts with fewer free vCPUs than asked
   * are jumped over a whole run at a time (within each free-GPU count they come first).
   */
  first(c: CompiledRequest): HostState | null {
    const items = this.items;
    let i = 0;
    while (i < items.length) {
      const h = items[i]!;
      if (h.freeVcpu < c.vcpu) {
        i = this.enoughVcpu(i, h.freeGpus, c.vcpu);
        continue;
      }
      if (fits(h, c)) return h;
      i++;
    }
    return null;
  }

  values(): readonly HostState[] {
    return this.items;
  }

  /** from `from`, the first host with more free GPUs than `gpus`, or as many and at least `vcpu` free vCPUs */
  private enoughVcpu(from: number, gpus: number, vcpu: number): number {
    const items = this.items;
    let lo = from;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const x = items[mid]!;
      if (x.freeGpus < gpus || (x.freeGpus === gpus && x.freeVcpu < vcpu)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
