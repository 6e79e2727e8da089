// Embedded store: records live in memory (frozen, so readers cannot mutate them), every transaction
// is journaled with group commit before it resolves, and lowdb writes a whole-file snapshot at most
// once per `snapshotIntervalMs`, atomically (steno writes a temp file and renames it).
import { mkdir, open as openFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { Journal, type JournalOp } from './journal.ts';
import { INDEXED_FIELDS, COLLECTION_NAMES } from '../../model/collections.ts';
import type { CollectionName, RecordOf, Store, StoreChange, StoreTx, Where } from './store.ts';

interface Snapshot {
  seq: number;
  collections: Record<string, Record<string, unknown>>;
}

export interface LowdbStoreOptions {
  dir: string;
  /** fdatasync each group commit (survives power loss, not only a killed process); default true */
  fsync?: boolean;
  snapshotIntervalMs?: number;
}

type AnyRecord = { id: string } & Record<string, unknown>;

/** the next timed snapshot waits at least this many times as long as the last one took */
const SNAPSHOT_COST_FACTOR = 20;

async function fsyncPath(p: string): Promise<void> {
  const fh = await openFile(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

class Table {
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

export class LowdbStore implements Store {
  private readonly tables = new Map<string, Table>();
  private seq = 0;
  private snapshotSeq = 0;
  private lock: Promise<unknown> = Promise.resolve();
  private snapshotTimer: NodeJS.Timeout | null = null;
  private snapshotting: Promise<void> | null = null;
  private readonly listeners = new Set<(changes: StoreChange[]) => void>();
  private closed = false;
  /** how long the last snapshot took (ms) */
  private snapshotCostMs = 0;

  private constructor(
    private readonly db: Low<Snapshot>,
    private readonly journal: Journal,
    private readonly snapshotIntervalMs: number,
    private readonly snapshotFile: string,
    private readonly fsync: boolean,
  ) {
    for (const c of COLLECTION_NAMES) this.tables.set(c, new Table(INDEXED_FIELDS[c] ?? []));
  }

  static async open(opts: LowdbStoreOptions): Promise<LowdbStore> {
    await mkdir(opts.dir, { recursive: true });
    const journalDir = path.join(opts.dir, 'journal');
    await mkdir(journalDir, { recursive: true });
    const snapshotFile = path.join(opts.dir, 'gpufleet.json');
    const fsync = opts.fsync ?? true;
    // compact JSON: the snapshot is rewritten whole, and pretty-printing a large state doubles its cost
    const db = new Low<Snapshot>(new DataFile(snapshotFile, { parse: JSON.parse, stringify: (d) => JSON.stringify(d) }), { seq: 0, collections: {} });
    await db.read();
    const store = new LowdbStore(db, new Journal(journalDir, fsync), opts.snapshotIntervalMs ?? 1000, snapshotFile, fsync);
    store.load(db.data);
    const { entries, lastSeq, files } = await Journal.replay(journalDir, db.data.seq);
    for (const e of entries) store.apply(e.ops);
    store.seq = lastSeq;
    store.snapshotSeq = db.data.seq;
    store.journal.rotate(lastSeq + 1);
    if (entries.length > 0) await store.snapshot();
    // every replayed line is now in the durable snapshot: the old segments are not needed again
    for (const f of files) await rm(f, { force: true });
    return store;
  }

  private load(snap: Snapshot): void {
    for (const [c, rows] of Object.entries(snap.collections)) {
      const table = this.tables.get(c);
      if (!table) continue;
      for (const [id, rec] of Object.entries(rows)) table.set(id, deepFreeze(rec as AnyRecord));
    }
  }

  private apply(ops: JournalOp[]): void {
    for (const op of ops) this.tables.get(op.c)?.set(op.id, op.v === null ? null : deepFreeze(op.v as AnyRecord));
  }

  private table(c: string): Table {
    const t = this.tables.get(c);
    if (!t) throw new Error(`unknown collection ${c}`);
    return t;
  }

  async get<C extends CollectionName>(c: C, id: string): Promise<RecordOf<C> | undefined> {
    return this.table(c).rows.get(id) as RecordOf<C> | undefined;
  }

  async list<C extends CollectionName>(c: C, where?: Where<C>): Promise<RecordOf<C>[]> {
    return this.table(c).select(where as Record<string, unknown> | undefined) as unknown as RecordOf<C>[];
  }

  async count<C extends CollectionName>(c: C, where?: Where<C>): Promise<number> {
    if (!where) return this.table(c).rows.size;
    return (await this.list(c, where)).length;
  }

  onCommit(listener: (changes: StoreChange[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  transact<T>(fn: (tx: StoreTx) => Promise<T> | T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const run = this.lock.then(() => this.runTx(fn));
    this.lock = run.catch(() => undefined);
    return run.then(async ({ value, seq }) => {
      if (seq > 0) await this.journal.sync(seq);
      return value;
    });
  }

  private async runTx<T>(fn: (tx: StoreTx) => Promise<T> | T): Promise<{ value: T; seq: number }> {
    const overlay = new Map<string, Map<string, AnyRecord | null>>();
    const staged = (c: string) => overlay.get(c) ?? overlay.set(c, new Map()).get(c)!;
    const tx: StoreTx = {
      get: async (c, id) => {
        const o = overlay.get(c);
        if (o?.has(id)) return (o.get(id) ?? undefined) as never;
        return this.get(c, id);
      },
      list: async (c, where) => {
        const base = await this.list(c, where);
        const o = overlay.get(c);
        if (!o) return base;
        const w = Object.entries((where ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined);
        const out = base.filter((r) => !o.has((r as unknown as AnyRecord).id));
        for (const rec of o.values()) if (rec && w.every(([k, v]) => rec[k] === v)) out.push(rec as never);
        return out;
      },
      count: async (c, where) => (await tx.list(c, where)).length,
      put: (c, record) => {
        const rec = deepFreeze(structuredClone(record)) as unknown as AnyRecord;
        staged(c).set(rec.id, rec);
      },
      delete: (c, id) => {
        staged(c).set(id, null);
      },
    };
    const value = await fn(tx);
    const ops: JournalOp[] = [];
    for (const [c, rows] of overlay) for (const [id, v] of rows) ops.push({ c, id, v });
    if (ops.length === 0) return { value, seq: 0 };
    const seq = ++this.seq;
    this.apply(ops);
    this.journal.append({ seq, ops });
    this.scheduleSnapshot();
    const changes = ops.map((o) => ({ collection: o.c as CollectionName, id: o.id, deleted: o.v === null }));
    for (const l of this.listeners) l(changes);
    return { value, seq };
  }

  private scheduleSnapshot(): void {
    if (this.snapshotTimer || this.closed) return;
    // a snapshot blocks the event loop while it serialises the whole state: space them out so they
    // take at most about 1/SNAPSHOT_COST_FACTOR of the time, however large the state has grown
    const delay = Math.max(this.snapshotIntervalMs, SNAPSHOT_COST_FACTOR * this.snapshotCostMs);
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      void this.snapshot().catch(() => undefined);
    }, delay);
    this.snapshotTimer.unref();
  }

  /** Writes the whole state with lowdb and drops the journal segments it covers. */
  async snapshot(): Promise<void> {
    while (this.snapshotting) await this.snapshotting;
    if (this.seq === this.snapshotSeq) return;
    this.snapshotting = (async () => {
      const started = performance.now();
      const seq = this.seq;
      const collections: Snapshot['collections'] = {};
      for (const [c, t] of this.tables) collections[c] = Object.fromEntries(t.rows);
      this.db.data = { seq, collections };
      this.journal.rotate(seq + 1);
      await this.db.write();
      // the journal lines this snapshot covers are deleted next, so it must be on disk first
      // (lowdb writes a temp file and renames it, without fsync)
      if (this.fsync) {
        await fsyncPath(this.snapshotFile);
        await fsyncPath(path.dirname(this.snapshotFile));
      }
      this.snapshotSeq = seq;
      await this.journal.dropThrough(seq);
      this.snapshotCostMs = performance.now() - started;
    })().finally(() => {
      this.snapshotting = null;
    });
    await this.snapshotting;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.lock;
    this.closed = true;
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    await this.journal.sync(this.seq).catch(() => undefined);
    await this.snapshot();
    await this.journal.close();
  }
}
