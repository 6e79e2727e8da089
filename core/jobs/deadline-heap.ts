// A binary min-heap of deadlines. Entries are hints: whoever pops one re-checks the job it names
// (the job may have moved on, or its deadline moved later), so entries are never updated in place.

export type DeadlineKind = 'ttl' | 'lease' | 'exec' | 'expire';

export interface Deadline {
  at: number;
  id: string;
  kind: DeadlineKind;
}

export class DeadlineHeap {
  private readonly items: Deadline[] = [];

  get size(): number {
    return this.items.length;
  }

  push(d: Deadline): void {
    const a = this.items;
    a.push(d);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.at <= d.at) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = d;
  }

  /** whether an entry is at or before `now` */
  hasDue(now: number): boolean {
    const top = this.items[0];
    return top !== undefined && top.at <= now;
  }

  /** the earliest deadline at or before `now`, removed; undefined when none is due */
  popDue(now: number): Deadline | undefined {
    const a = this.items;
    const top = a[0];
    if (!top || top.at > now) return undefined;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]!.at < a[l]!.at ? r : l;
        if (a[c]!.at >= last.at) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}
