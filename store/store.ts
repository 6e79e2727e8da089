// The store interface every layer codes against. The embedded default is lowdb plus a journal
// (lowdb-store.ts); a PostgreSQL adapter implements the same interface: equality filters only,
// transactions that are serialisable and durable when they resolve.
import type { Collections } from '../model/index.ts';

export type CollectionName = keyof Collections;
export type RecordOf<C extends CollectionName> = Collections[C];
export type Where<C extends CollectionName> = Partial<{ [K in keyof RecordOf<C>]: RecordOf<C>[K] }>;

export interface StoreReader {
  get<C extends CollectionName>(c: C, id: string): Promise<RecordOf<C> | undefined>;
  /** records matching every field of `where` (strict equality); all records when omitted */
  list<C extends CollectionName>(c: C, where?: Where<C>): Promise<RecordOf<C>[]>;
  count<C extends CollectionName>(c: C, where?: Where<C>): Promise<number>;
}

export interface StoreTx extends StoreReader {
  put<C extends CollectionName>(c: C, record: RecordOf<C>): void;
  delete<C extends CollectionName>(c: C, id: string): void;
}

export interface Store extends StoreReader {
  /**
   * Runs `fn` alone against the current state. Its writes become visible together when it returns
   * and the returned promise resolves only once they are durable; if `fn` throws nothing changes.
   */
  transact<T>(fn: (tx: StoreTx) => Promise<T> | T): Promise<T>;
  /** Called after each committed transaction with the collections and ids it touched. */
  onCommit(listener: (changes: StoreChange[]) => void): () => void;
  close(): Promise<void>;
}

export interface StoreChange {
  collection: CollectionName;
  id: string;
  deleted: boolean;
}
