// Embedded store: records live in memory (frozen, so readers cannot mutate them), every transaction
// is journaled with group commit before it resolves, and lowdb writes a whole-file snapshot at most
// once per `snapshotIntervalMs`, atomically (a 0600 temp file renamed over it). Records cross the
// persistence boundary through RecordCodec: sealed fields (env values) are ciphertext on disk only.
// Readers see only durable writes: a transaction waits in the pending layer (where later transactions
// read it) until its journal line is on disk, and is dropped, unseen, if that write fails.
import { existsSync } from 'node:fs';
import { open as openFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';
import { Journal, type JournalOp, type ReplayResult } from './journal.ts';
import { PendingLayer, layered, type PendingTx } from './pending-layer.ts';
import { SnapshotFile, secureDataDir } from './data-dir.ts';
import { pausePoint } from '../base/pause-point.ts';
import { fsyncPath } from '../log/log-files.ts';
import { Table, deepFreeze, type AnyRecord } from '../base/memory-table.ts';
import { RecordCodec, type StoredRecord } from '../base/record-codec.ts';
import { SECRET_KEY_FILE, SecretBox } from '../base/secret-box.ts';
import { INDEXED_FIELDS, COLLECTION_NAMES } from '../../model/index.ts';
import type { CollectionName, CommitInfo, RecordOf, Store, StoreChange, StoreObserver, StoreTx, TxOptions, Where } from '../base/store.ts';

export interface LowdbStoreOptions {
  dir: string;
  /** fdatasync each group commit (survives power loss, not only a killed process); default true */
  fsync?: boolean;
  snapshotIntervalMs?: number;
  /** seals env values at rest; default: the box over `<dir>/secret.key` (created on first start) */
  secretBox?: SecretBox;
  /**
   * Told what start changed on its own: a torn last journal record cut off, file modes narrowed,
   * records stored in clear by an earlier version sealed. Default: a process warning (stderr).
   */
  onNotice?: (message: string) => void;
  /** told each commit's duration (metrics) */
  observer?: StoreObserver;
  /**
   * Told of each failure the store meets on its own: a journal write that failed (the transactions it
   * dropped fail with this same STORE_UNAVAILABLE error), a snapshot that could not be written.
   * Default: a process warning (stderr).
   */
  onError?: (error: GpufleetError) => void;
}

export const SNAPSHOT_FILE = 'gpufleet.json';
export const JOURNAL_DIR = 'journal';

export interface SnapshotData {
  seq: number;
  collections: Record<string, Record<string, unknown>>;
}

/** the next timed snapshot waits at least this many times as long as the last one took */
const SNAPSHOT_COST_FACTOR = 20;

export class LowdbStore implements Store {
  private readonly tables = new Map<string, Table>();
  /** the last seq given to a transaction (pending ones included) */
  private seq = 0;
  /** the last seq on disk: what the tables hold */
  private durableSeq = 0;
  private snapshotSeq = 0;
  private readonly pending = new PendingLayer();
  /** the journal line of the newest pending transaction: what a read-only transaction waits for */
  private lastLine: Promise<void> | null = null;
  /** bumped when a failed write drops the pending transactions; a transaction running then fails too */
  private epoch = 0;
  private readonly journal: Journal;
  private readonly stageListeners = new Set<(changes: StoreChange[], commit: CommitInfo) => void>();
  private onError: (error: GpufleetError) => void = (e) => process.emitWarning(e.message, { code: 'GPUFLEET_STORE' });
  private lock: Promise<unknown> = Promise.resolve();
  private snapshotTimer: NodeJS.Timeout | null = null;
  private snapshotting: Promise<void> | null = null;
  private readonly listeners = new Set<(changes: StoreChange[], commit: CommitInfo) => void>();
  private observer: StoreObserver | undefined;
  private closed = false;
  /** how long the last snapshot took (ms) */
  private snapshotCostMs = 0;

  private constructor(
    private readonly db: Low<SnapshotData>,
    journalDir: string,
    private readonly snapshotIntervalMs: number,
    private readonly snapshotFile: string,
    private readonly fsync: boolean,
    private readonly codec: RecordCodec,
  ) {
    for (const c of COLLECTION_NAMES) this.tables.set(c, new Table(INDEXED_FIELDS[c] ?? []));
    this.journal = new Journal(journalDir, fsync, { durable: (seq) => this.settle(seq), dropped: (kept, e) => this.drop(kept, e) });
  }

  static async open(opts: LowdbStoreOptions): Promise<LowdbStore> {
    const notice = opts.onNotice ?? ((m: string) => process.emitWarning(m, { code: 'GPUFLEET_STORE' }));
    const journalDir = path.join(opts.dir, JOURNAL_DIR);
    const narrowed = await secureDataDir(opts.dir, journalDir);
    if (narrowed.length > 0) notice(`store: made private (owner-only mode): ${narrowed.join(', ')}`);
    const snapshotFile = path.join(opts.dir, SNAPSHOT_FILE);
    const fsync = opts.fsync ?? true;
    const keyFile = path.join(opts.dir, SECRET_KEY_FILE);
    const keyExisted = opts.secretBox !== undefined || existsSync(keyFile);
    const codec = new RecordCodec(opts.secretBox ?? (await SecretBox.load(opts.dir)));
    const db = new Low<SnapshotData>(new SnapshotFile(snapshotFile, fsync), { seq: 0, collections: {} });
    await db.read();
    const store = new LowdbStore(db, journalDir, opts.snapshotIntervalMs ?? 1000, snapshotFile, fsync, codec);
    store.observer = opts.observer;
    if (opts.onError) store.onError = opts.onError;
    let clear: boolean;
    let replayed: ReplayResult;
    try {
      clear = store.load(db.data, snapshotFile);
      replayed = await Journal.replay(journalDir, db.data.seq);
      for (const e of replayed.entries) {
        const decoded = store.decodeOps(e.ops, journalDir);
        clear ||= decoded.clear;
        store.apply(decoded.ops);
      }
    } catch (e) {
      // sealed values and no key: the key was just created, and can never open them
      if (!keyExisted && isGpufleetError(e) && e.fields.field !== undefined) {
        await rm(keyFile, { force: true });
        throw new GpufleetError('INTERNAL', `${keyFile} is missing and the store holds values sealed with it: restore it from a backup`, {
          cause: e,
          fields: e.fields,
        });
      }
      throw e;
    }
    const { entries, lastSeq, files, cut } = replayed;
    if (cut)
      notice(
        `store: cut a torn last journal record at ${cut.file}:${cut.line} (${cut.reason}); ` +
          'a crash during its append leaves one, and its write was never acknowledged',
      );
    store.seq = lastSeq;
    store.durableSeq = lastSeq;
    store.snapshotSeq = db.data.seq;
    store.journal.rotate(lastSeq + 1);
    if (clear) notice('store: env values stored in clear by an earlier version are now sealed (snapshot rewritten)');
    if (entries.length > 0 || clear) await store.snapshot(true);
    if (files.length > 0) await pausePoint('replayed-journal-kept');
    // every replayed line is now in the durable snapshot: the old segments are not needed again
    for (const f of files) await rm(f, { force: true });
    return store;
  }

  /** Loads the snapshot; true when a record held a sealed field in clear. */
  private load(snap: SnapshotData, source: string): boolean {
    let clear = false;
    for (const [c, rows] of Object.entries(snap.collections)) {
      const table = this.tables.get(c);
      if (!table) continue;
      for (const [id, stored] of Object.entries(rows)) {
        const { rec, clear: wasClear } = this.codec.decode(c, stored as StoredRecord, source);
        clear ||= wasClear;
        table.set(id, deepFreeze(rec as AnyRecord));
      }
    }
    return clear;
  }

  /** Journal ops (disk form) → in-memory ops; `clear` when one held a sealed field in clear. */
  private decodeOps(ops: JournalOp[], source: string): { ops: JournalOp[]; clear: boolean } {
    let clear = false;
    const out = ops.map((op) => {
      if (op.v === null) return op;
      const d = this.codec.decode(op.c, op.v as StoredRecord, source);
      clear ||= d.clear;
      return { ...op, v: d.rec };
    });
    return { ops: out, clear };
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

  onCommit(listener: (changes: StoreChange[], commit: CommitInfo) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onStage(listener: (changes: StoreChange[]) => void): () => void {
    this.stageListeners.add(listener);
    return () => this.stageListeners.delete(listener);
  }

  transact<T>(fn: (tx: StoreTx) => Promise<T> | T, opts: TxOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const run = this.lock.then(() => this.runTx(fn, { actor: opts.actor }));
    this.lock = run.catch(() => undefined);
    return run.then(async ({ value, line, appliedAt }) => {
      if (line) {
        await line;
        if (appliedAt > 0) this.observer?.committed((performance.now() - appliedAt) / 1000);
      }
      return value;
    });
  }

  /** A write to the journal's disk, after a failed one: clears writeBlocker() once the disk takes writes again. */
  async probeWrite(): Promise<void> {
    if (this.closed) throw new Error('store is closed');
    await this.journal.probe();
  }

  writeBlocker(): string | null {
    if (this.closed) return 'the store is closed';
    const failed = this.journal.failure();
    return failed ? `a journal write failed: ${failed instanceof Error ? failed.message : String(failed)}` : null;
  }

  /**
   * Runs `fn` against the durable state with the pending transactions laid over it (then its own
   * writes), stages its writes and appends their journal line. `line`: what the caller waits for
   * before answering (a read-only transaction waits for the pending writes it may have read).
   */
  private async runTx<T>(fn: (tx: StoreTx) => Promise<T> | T, commit: CommitInfo): Promise<{ value: T; line: Promise<void> | null; appliedAt: number }> {
    const epoch = this.epoch;
    const overlay = new Map<string, Map<string, AnyRecord | null>>();
    const staged = (c: string) => overlay.get(c) ?? overlay.set(c, new Map()).get(c)!;
    /** the version before this transaction: pending, else durable */
    const before = (c: string, id: string): AnyRecord | undefined => {
      const p = this.pending.get(c, id);
      return p === undefined ? this.table(c).rows.get(id) : (p ?? undefined);
    };
    const tx: StoreTx = {
      get: async (c, id) => {
        const o = overlay.get(c);
        return (o?.has(id) ? (o.get(id) ?? undefined) : before(c, id)) as never;
      },
      list: async (c, where) => {
        const w = Object.entries((where ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined);
        const base = this.table(c).select(where as Record<string, unknown> | undefined);
        return layered(layered(base, this.pending.versions(c), w), overlay.get(c), w) as never;
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
    // a write it may have read through was dropped (the journal failed) while it ran
    if (epoch !== this.epoch) throw this.lastDrop ?? new GpufleetError('STORE_UNAVAILABLE', 'A write this one may depend on failed; nothing of it was applied.');
    const ops: JournalOp[] = [];
    for (const [c, rows] of overlay) for (const [id, v] of rows) ops.push({ c, id, v });
    if (ops.length === 0) return { value, line: this.lastLine, appliedAt: 0 };
    // sealed before staging: an unchanged env reuses the ciphertext of the version it replaces
    const stored = ops.map((o) => (o.v === null ? o : { ...o, v: this.codec.encode(o.c, o.v as StoredRecord, before(o.c, o.id)) }));
    const seq = ++this.seq;
    const appliedAt = performance.now();
    this.pending.stage({ seq, ops, commit });
    const line = this.journal.append({ seq, ops: stored });
    this.lastLine = line;
    this.scheduleSnapshot();
    this.announce(this.stageListeners, changesOf(ops), commit);
    return { value, line, appliedAt };
  }

  /** The journal is on disk up to `seq`: those transactions move into the tables, and are announced. */
  private settle(seq: number): void {
    const done = this.pending.settle(seq);
    for (const tx of done) this.apply(tx.ops);
    this.durableSeq = seq;
    if (this.pending.size === 0) this.lastLine = null;
    for (const tx of done) this.announce(this.listeners, changesOf(tx.ops), tx.commit);
  }

  /** the error of the last failed journal write, for transactions that were running when it came */
  private lastDrop: GpufleetError | null = null;

  /**
   * A journal write failed and every pending transaction was dropped: nothing outside saw them. The
   * next transaction continues from `keptSeq`. Indexes that read through transactions (onStage) are
   * told the records they saw are back at their durable versions.
   */
  private drop(keptSeq: number, error: GpufleetError): void {
    const dropped: PendingTx[] = this.pending.dropAll();
    this.seq = keptSeq;
    this.epoch++;
    this.lastLine = null;
    this.lastDrop = error;
    this.onError(error);
    const seen = new Map<string, { c: string; id: string }>();
    for (const tx of dropped) for (const op of tx.ops) seen.set(`${op.c}/${op.id}`, { c: op.c, id: op.id });
    const back: JournalOp[] = [...seen.values()].map(({ c, id }) => ({ c, id, v: this.tables.get(c)?.rows.get(id) ?? null }));
    this.announce(this.stageListeners, changesOf(back), { actor: undefined });
  }

  private announce(listeners: Set<(changes: StoreChange[], commit: CommitInfo) => void>, changes: StoreChange[], commit: CommitInfo): void {
    for (const l of listeners) {
      try {
        l(changes, commit);
      } catch (e) {
        this.onError(new GpufleetError('INTERNAL', `A store listener failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
      }
    }
  }

  private scheduleSnapshot(): void {
    if (this.snapshotTimer || this.closed) return;
    // a snapshot blocks the event loop while it serialises the whole state: space them out so they
    // take at most about 1/SNAPSHOT_COST_FACTOR of the time, however large the state has grown
    const delay = Math.max(this.snapshotIntervalMs, SNAPSHOT_COST_FACTOR * this.snapshotCostMs);
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      // the journal still holds every write, so nothing is lost; the next write schedules another try
      void this.snapshot().catch((e: unknown) =>
        this.onError(
          new GpufleetError('STORE_UNAVAILABLE', `The store could not write its snapshot (${e instanceof Error ? e.message : String(e)}); the journal keeps every write, and it will try again.`, {
            cause: e,
          }),
        ),
      );
    }, delay);
    this.snapshotTimer.unref();
  }

  /**
   * Writes the whole state with lowdb and drops the journal segments it covers. `force`: even when
   * nothing changed since the last one (start rewrites a snapshot that held values in clear).
   */
  async snapshot(force = false): Promise<void> {
    while (this.snapshotting) await this.snapshotting;
    if (this.durableSeq === this.snapshotSeq && !force) return;
    this.snapshotting = (async () => {
      const started = performance.now();
      // the tables hold what is durable, up to durableSeq; pending lines stay in the journal
      const seq = this.durableSeq;
      const collections: SnapshotData['collections'] = {};
      for (const [c, t] of this.tables) {
        const rows: Record<string, unknown> = {};
        for (const [id, rec] of t.rows) rows[id] = this.codec.encode(c, rec);
        collections[c] = rows;
      }
      this.db.data = { seq, collections };
      this.journal.rotate(this.seq + 1);
      await this.db.write();
      // the journal lines this snapshot covers are deleted next, so it must be on disk first: the
      // adapter flushed the file before its rename, the folder's entry is flushed here
      if (this.fsync) await fsyncPath(path.dirname(this.snapshotFile));
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
    await this.lastLine?.catch(() => undefined);
    await this.snapshot();
    await this.journal.close();
  }
}

function changesOf(ops: JournalOp[]): StoreChange[] {
  return ops.map((o) => ({ collection: o.c, id: o.id, deleted: o.v === null, ...(o.v === null ? {} : { record: o.v }) }) as StoreChange);
}
