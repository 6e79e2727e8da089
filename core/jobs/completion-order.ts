// Each endpoint's COMPLETED jobs in (finishedAt, id) order, for `completedJobs` (the public model
// charge sweep pages through them): a page is a binary search for the cursor and a walk of at most
// `limit` live entries, where it was a scan and a sort of every retained job of the endpoint per page
// (quadratic over a first sweep of a large endpoint). An endpoint is indexed the first time it is
// asked for (built from its jobs once), so endpoints nobody sweeps cost nothing. Entries are added as
// jobs become COMPLETED; a job removed (expired, dropped) leaves its entry behind, skipped when met,
// and the list is compacted once most of it is such entries. Completion times come from one clock in
// log order, so a new entry almost always goes at the end; one that does not (the clock stepped back)
// is inserted in its place.

export interface Completion {
  finishedAt: number;
  id: string;
}

interface Indexed {
  list: Completion[];
  /** entries whose job has since been removed */
  dead: number;
}

/** a before b in (finishedAt, id) order */
const before = (a: Completion, b: Completion): boolean => a.finishedAt < b.finishedAt || (a.finishedAt === b.finishedAt && a.id < b.id);

export class CompletionOrder {
  private readonly indexed = new Map<string, Indexed>();

  /** `kept(id)`: the job is still in the table and COMPLETED (expired or not) */
  constructor(private readonly kept: (id: string) => boolean) {}

  /** A job of the endpoint became COMPLETED. */
  completed(endpointId: string, c: Completion): void {
    const e = this.indexed.get(endpointId);
    if (!e) return;
    const i = firstAfter(e.list, c, false);
    if (i === e.list.length) e.list.push(c);
    else e.list.splice(i, 0, c);
  }

  /** A COMPLETED job of the endpoint left the table (or its status changed). */
  removed(endpointId: string): void {
    const e = this.indexed.get(endpointId);
    if (!e) return;
    e.dead++;
    if (e.dead > 256 && e.dead * 2 > e.list.length) {
      e.list = e.list.filter((c) => this.kept(c.id));
      e.dead = 0;
    }
  }

  /** The endpoint's jobs are all gone. */
  forget(endpointId: string): void {
    this.indexed.delete(endpointId);
  }

  /**
   * Up to `limit` entries after `after` that `answers` (the job is COMPLETED with that finishedAt and
   * not expired), in order, each once. `all` gives the endpoint's COMPLETED jobs the first time it is
   * asked for.
   */
  page(endpointId: string, after: Completion, limit: number, answers: (c: Completion) => boolean, all: () => Completion[]): Completion[] {
    let e = this.indexed.get(endpointId);
    if (!e) this.indexed.set(endpointId, (e = { list: all().sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)), dead: 0 }));
    const out: Completion[] = [];
    for (let i = firstAfter(e.list, after, true); i < e.list.length && out.length < limit; i++) {
      const c = e.list[i]!;
      const last = out.at(-1);
      // a job removed and put back as COMPLETED with the same time has two entries, side by side
      if (last && last.id === c.id && last.finishedAt === c.finishedAt) continue;
      if (answers(c)) out.push(c);
    }
    return out;
  }
}

/** the index of the first entry after `c` (`strictly`), or at or after it */
function firstAfter(list: Completion[], c: Completion, strictly: boolean): number {
  if (list.length === 0 || before(list.at(-1)!, c)) return list.length;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const m = list[mid]!;
    const skip = before(m, c) || (strictly && m.finishedAt === c.finishedAt && m.id === c.id);
    if (skip) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
