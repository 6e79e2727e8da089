// The in-memory side of the embedded store: one table per collection, records deeply frozen (readers
// cannot change the stored state), equality indexes on the fields lists filter by most.

export type AnyRecord = { id: string } & Record<string, unknown>;

export function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

export class Table {
  readonly rows = new Map<string, AnyRecord>();
  readonly indexes = new Map<string, Map<unknown, Set<string>>>();

  constructor(indexed: readonly string[]) {
    for (const f of indexed) this.indexes.set(f, new Map());
  }

  set(id: string, rec: AnyRecord | null): void {
    const old = this.rows.get(id);
    for (const [field, idx] of this.indexes) {
      if (old) idx.get(old[field])?.delete(id);
      if (rec) {
        let ids = idx.get(rec[field]);
        if (!ids) idx.set(rec[field], (ids = new Set()));
        ids.add(id);
      }
    }
    if (rec) this.rows.set(id, rec);
    else this.rows.delete(id);
  }

  select(where: Record<string, unknown> | undefined): AnyRecord[] {
    const entries = where ? Object.entries(where).filter(([, v]) => v !== undefined) : [];
    let candidates: Iterable<AnyRecord> = this.rows.values();
    // the most selective index among the filtered fields
    let best: Set<string> | null = null;
    for (const [k, v] of entries) {
      const idx = this.indexes.get(k);
      if (!idx) continue;
      const ids = idx.get(v) ?? new Set<string>();
      if (!best || ids.size < best.size) best = ids;
    }
    if (best) candidates = [...best].map((id) => this.rows.get(id)!);
    const out: AnyRecord[] = [];
    for (const r of candidates) if (entries.every(([k, v]) => r[k] === v)) out.push(r);
    return out;
  }
}
