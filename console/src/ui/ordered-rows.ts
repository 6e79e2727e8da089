// Rows of a live list that two kinds of answer update: a whole list (GET /v2/pods) and one row
// (GET /v2/pods/{id} after an event about it). Answers can come back in any order, so each request is
// numbered when it is sent, and each row remembers the number of the request that last set it
// (or found it gone): an answer never overwrites what a request sent after it said. Without this, a
// list that was read before a pod stopped but arrived after the pod's own answer put the old status
// back (a lost update).

export class OrderedRows<T extends { id: string }> {
  private next = 1;
  private list: T[] = [];
  /** id → the number of the request that last said what the row is (or that it is gone) */
  private readonly stamps = new Map<string, number>();

  /** the number of a request about to be sent */
  begin(): number {
    return this.next++;
  }

  get rows(): readonly T[] {
    return this.list;
  }

  /** the row of `id` as the rows are now */
  has(id: string): boolean {
    return this.list.some((r) => r.id === id);
  }

  /** a whole list, read by request `seq`: it replaces the rows, but not those a later request set or removed */
  applyList(seq: number, rows: readonly T[]): void {
    const fresh = new Map(rows.map((r) => [r.id, r]));
    const kept: T[] = [];
    for (const r of rows) {
      const stamp = this.stamps.get(r.id) ?? 0;
      if (stamp > seq) {
        const mine = this.list.find((x) => x.id === r.id);
        if (mine) kept.push(mine);
      } else {
        this.stamps.set(r.id, seq);
        kept.push(r);
      }
    }
    // rows the list does not have: kept only when a later request put them there
    for (const r of this.list) if (!fresh.has(r.id) && (this.stamps.get(r.id) ?? 0) > seq) kept.push(r);
    for (const id of [...this.stamps.keys()]) if (!fresh.has(id) && (this.stamps.get(id) ?? 0) <= seq) this.stamps.set(id, seq);
    this.list = kept;
  }

  /**
   * one row as request `seq` read it: `undefined` (gone, or no longer one the list shows) removes it;
   * a row the list does not have yet is added at the top. False when a later request already spoke.
   */
  applyOne(seq: number, id: string, row: T | undefined): boolean {
    if ((this.stamps.get(id) ?? 0) > seq) return false;
    this.stamps.set(id, seq);
    const at = this.list.findIndex((r) => r.id === id);
    if (!row) {
      if (at >= 0) this.list = this.list.filter((r) => r.id !== id);
    } else if (at >= 0) this.list = this.list.map((r) => (r.id === id ? row : r));
    else this.list = [row, ...this.list];
    return true;
  }
}
