// Transactions committed in memory whose journal line is not on disk yet. The store runs one
// transaction at a time, and each must see the one before it, so later transactions read through
// this layer; readers outside transactions never do: they see only the tables, which hold what is
// durable. When a line is on disk its transaction moves into the tables (`settle`); when a write
// fails, every pending transaction is dropped (`dropAll`), and no reader outside ever saw it.
import type { JournalOp } from './journal-format.ts';
import type { AnyRecord } from '../base/memory-table.ts';
import type { CommitInfo } from '../base/store.ts';

export interface PendingTx {
  seq: number;
  /** in-memory form: the frozen records the tables will hold */
  ops: JournalOp[];
  commit: CommitInfo;
}

/** the versions a layer holds for one collection, by id: a record, or null for a delete */
export type Versions = ReadonlyMap<string, AnyRecord | null>;

export class PendingLayer {
  private txs: PendingTx[] = [];
  /** the newest pending version of each record, and the seq that wrote it */
  private readonly rows = new Map<string, Map<string, AnyRecord | null>>();
  private readonly seqs = new Map<string, Map<string, number>>();

  get size(): number {
    return this.txs.length;
  }

  stage(tx: PendingTx): void {
    this.txs.push(tx);
    for (const op of tx.ops) {
      mapOf(this.rows, op.c).set(op.id, op.v as AnyRecord | null);
      mapOf(this.seqs, op.c).set(op.id, tx.seq);
    }
  }

  /** the newest pending version of `c/id`: a record, null when deleted, undefined when none is pending */
  get(c: string, id: string): AnyRecord | null | undefined {
    return this.rows.get(c)?.get(id);
  }

  versions(c: string): Versions | undefined {
    return this.rows.get(c);
  }

  /** Takes out the transactions up to `seq`, in order: their lines are on disk. */
  settle(seq: number): PendingTx[] {
    let n = 0;
    while (n < this.txs.length && this.txs[n]!.seq <= seq) n++;
    const done = this.txs.splice(0, n);
    for (const tx of done)
      for (const op of tx.ops) {
        if (this.seqs.get(op.c)?.get(op.id) !== tx.seq) continue; // a later pending tx wrote it again
        this.seqs.get(op.c)!.delete(op.id);
        this.rows.get(op.c)!.delete(op.id);
      }
    return done;
  }

  /** Drops every pending transaction (a write failed) and returns them. */
  dropAll(): PendingTx[] {
    const all = this.txs;
    this.txs = [];
    this.rows.clear();
    this.seqs.clear();
    return all;
  }
}

/** `base` with `versions` laid over it: replaced and deleted records out, the versions matching `where` in. */
export function layered(base: AnyRecord[], versions: Versions | undefined, where: [string, unknown][]): AnyRecord[] {
  if (!versions || versions.size === 0) return base;
  const out = base.filter((r) => !versions.has(r.id));
  for (const rec of versions.values()) if (rec && where.every(([k, v]) => rec[k] === v)) out.push(rec);
  return out;
}

function mapOf<V>(m: Map<string, Map<string, V>>, c: string): Map<string, V> {
  let inner = m.get(c);
  if (!inner) m.set(c, (inner = new Map()));
  return inner;
}
