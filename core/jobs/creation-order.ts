// Each endpoint's job ids in creation order, for the job history (JobTable.listJobs) to read a page
// from the newest end and stop early: ids are added as jobs are submitted, so the main list is kept in
// createdAt order by appending; an id created before the last one added (a job replayed or added out
// of order) goes to a side list that every page reads in full (small: it is folded into the main list,
// sorted, at the next rebuild). A removed id stays until more than half of a list is removed; then the
// list is rebuilt from the live ids.

interface Order {
  ids: string[];
  createdAt: number[];
  /** ids added out of creation order */
  late: string[];
  removed: number;
}

const empty = (): Order => ({ ids: [], createdAt: [], late: [], removed: 0 });

export class CreationOrder {
  private readonly lists = new Map<string, Order>();

  add(endpointId: string, id: string, createdAt: number): void {
    let o = this.lists.get(endpointId);
    if (!o) this.lists.set(endpointId, (o = empty()));
    push(o, id, createdAt);
  }

  /** one of the endpoint's ids is gone; `live` answers the createdAt of an id still there (for a rebuild) */
  removed(endpointId: string, live: (id: string) => number | undefined): void {
    const o = this.lists.get(endpointId);
    if (!o) return;
    if (++o.removed * 2 <= o.ids.length + o.late.length) return;
    const kept = [...o.ids, ...o.late].flatMap((id) => {
      const c = live(id);
      return c === undefined ? [] : [[id, c] as const];
    });
    if (!kept.length) return void this.lists.delete(endpointId);
    const fresh = empty();
    for (const [id, c] of kept.sort((a, b) => a[1] - b[1])) push(fresh, id, c);
    this.lists.set(endpointId, fresh);
  }

  /**
   * the endpoint's ids, those added out of order first, then the main list from the newest, starting
   * below the ids created strictly after `newerThan` (a cursor's createdAt); each with `upTo`, the
   * newest createdAt of it and every id yielded after it (Infinity for the out-of-order ones)
   */
  *newestFirst(endpointId: string, newerThan?: number): Generator<{ id: string; upTo: number }> {
    const o = this.lists.get(endpointId);
    if (!o) return;
    for (const id of o.late) yield { id, upTo: Infinity };
    let i = o.ids.length;
    if (newerThan !== undefined) {
      let lo = 0;
      let hi = o.ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (o.createdAt[mid]! > newerThan) hi = mid;
        else lo = mid + 1;
      }
      i = lo;
    }
    for (i--; i >= 0; i--) yield { id: o.ids[i]!, upTo: o.createdAt[i]! };
  }
}

function push(o: Order, id: string, createdAt: number): void {
  const n = o.ids.length;
  if (n && createdAt < o.createdAt[n - 1]!) {
    o.late.push(id);
    return;
  }
  o.ids.push(id);
  o.createdAt.push(createdAt);
}
