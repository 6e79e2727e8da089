// The store bench's baseline: a complete Store (the same interface the control plane runs on) that
// does the naive thing for durability: every committed transaction serialises the whole state and
// rewrites one file (write to a temp file, fdatasync, rename), one transaction at a time. Reads are
// plain scans of in-memory maps. Only the bench uses it.
import { open, rename } from 'node:fs/promises';
import type { CollectionName, CommitInfo, RecordOf, Store, StoreChange, StoreTx, TxOptions, Where } from '../store/index.ts';

type AnyRecord = { id: string } & Record<string, unknown>;

function matches(rec: AnyRecord, where: Record<string, unknown> | undefined): boolean {
  if (!where) return true;
  for (const [k, v] of Object.entries(where)) if (v !== undefined && rec[k] !== v) return false;
  return true;
}

export class NaiveFileStore implements Store {
  private readonly state = new Map<string, Map<string, AnyRecord>>();
  private readonly listeners = new Set<(changes: StoreChange[], commit: CommitInfo) => void>();
  private lock: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** full-state rewrites done so far */
  writes = 0;

  /** `initial`: the records to start from, per collection (the bench copies them from the real store) */
  constructor(
    private readonly file: string,
    initial: Record<string, readonly object[]>,
  ) {
    for (const [c, rows] of Object.entries(initial)) this.state.set(c, new Map(rows.map((r) => [(r as AnyRecord).id, r as AnyRecord])));
  }

  private table(c: string): Map<string, AnyRecord> {
    return this.state.get(c) ?? this.state.set(c, new Map()).get(c)!;
  }

  async get<C extends CollectionName>(c: C, id: string): Promise<RecordOf<C> | undefined> {
    return this.table(c).get(id) as RecordOf<C> | undefined;
  }

  async list<C extends CollectionName>(c: C, where?: Where<C>): Promise<RecordOf<C>[]> {
    const out: AnyRecord[] = [];
    for (const r of this.table(c).values()) if (matches(r, where as Record<string, unknown> | undefined)) out.push(r);
    return out as unknown as RecordOf<C>[];
  }

  async count<C extends CollectionName>(c: C, where?: Where<C>): Promise<number> {
    return (await this.list(c, where)).length;
  }

  onCommit(listener: (changes: StoreChange[], commit: CommitInfo) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  transact<T>(fn: (tx: StoreTx) => Promise<T> | T, opts: TxOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const run = this.lock.then(() => this.runTx(fn, opts));
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async runTx<T>(fn: (tx: StoreTx) => Promise<T> | T, opts: TxOptions): Promise<T> {
    const overlay = new Map<string, Map<string, AnyRecord | null>>();
    const staged = (c: string) => overlay.get(c) ?? overlay.set(c, new Map()).get(c)!;
    const tx: StoreTx = {
      get: async (c, id) => {
        const o = overlay.get(c);
        if (o?.has(id)) return (o.get(id) ?? undefined) as never;
        return this.get(c, id);
      },
      list: async (c, where) => {
        const o = overlay.get(c);
        const base = (await this.list(c, where)) as unknown as AnyRecord[];
        if (!o) return base as never;
        const out = base.filter((r) => !o.has(r.id));
        for (const rec of o.values()) if (rec && matches(rec, where as Record<string, unknown> | undefined)) out.push(rec);
        return out as never;
      },
      count: async (c, where) => (await tx.list(c, where)).length,
      put: (c, record) => {
        const rec = structuredClone(record) as unknown as AnyRecord;
        staged(c).set(rec.id, rec);
      },
      delete: (c, id) => {
        staged(c).set(id, null);
      },
    };
    const value = await fn(tx);
    const changes: StoreChange[] = [];
    for (const [c, rows] of overlay)
      for (const [id, v] of rows) {
        if (v === null) this.table(c).delete(id);
        else this.table(c).set(id, v);
        changes.push({ collection: c as CollectionName, id, deleted: v === null, ...(v === null ? {} : { record: v }) } as StoreChange);
      }
    if (changes.length === 0) return value;
    await this.writeAll();
    for (const l of this.listeners) l(changes, { actor: opts.actor });
    return value;
  }

  /** the whole state, durably: temp file, fdatasync, rename */
  private async writeAll(): Promise<void> {
    const collections: Record<string, Record<string, AnyRecord>> = {};
    for (const [c, rows] of this.state) collections[c] = Object.fromEntries(rows);
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify({ collections }));
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    this.writes++;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.lock;
  }
}
