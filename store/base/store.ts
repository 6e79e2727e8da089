// The store interface every layer codes against. Two implementations: lowdb plus a journal
// (lowdb-store.ts, the default) and PostgreSQL (pg/pg-store.ts), against one contract: equality filters only,
// transactions that are serialisable and durable when they resolve.
import type { Collections } from '../../model/index.ts';

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
  transact<T>(fn: (tx: StoreTx) => Promise<T> | T, opts?: TxOptions): Promise<T>;
  /**
   * Called after each committed transaction with the collections and ids it touched (and the records
   * as it left them) and who made it; synchronously, so a listener must be quick and must not throw.
   * Committed means durable: a transaction whose write fails is never announced here.
   */
  onCommit(listener: (changes: StoreChange[], commit: CommitInfo) => void): () => void;
  /**
   * For in-process indexes that transactions read (the placer): called synchronously, in commit order,
   * as soon as a transaction's writes are visible to the transactions after it, before they are
   * durable; and, when a failed write drops them, again for the same records with their durable
   * versions. A store without such a window may leave it out (onCommit then serves).
   */
  onStage?(listener: (changes: StoreChange[]) => void): () => void;
  /** Why a write could not be made durable now (closed, a failed journal write), or null. No I/O. */
  writeBlocker?(): string | null;
  /**
   * A small write to the store's own disk, made by /readyz while writeBlocker() names a failed write:
   * success clears it (the disk takes writes again, though no transaction has written since).
   */
  probeWrite?(): Promise<void>;
  close(): Promise<void>;
}

/** Told how the store performs (core/observability/telemetry implements it with prom-client). */
export interface StoreObserver {
  /** a transaction that wrote: seconds from its writes being applied to their being durable */
  committed(seconds: number): void;
}

export interface TxOptions {
  /** who makes the change, for the events it causes (core/observability/events): `user:<keyId>`, `operator`, `provisioner` */
  actor?: string;
}

export interface CommitInfo {
  /** TxOptions.actor of the transaction; undefined when it named none */
  actor: string | undefined;
}

/** One record a transaction wrote or deleted; `record` is the version it committed (absent when deleted). */
export type StoreChange = {
  [C in CollectionName]: { collection: C; id: string; deleted: boolean; record?: RecordOf<C> };
}[CollectionName];
