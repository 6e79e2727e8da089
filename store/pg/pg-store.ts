// The PostgreSQL store: the Store port over a database several control-plane replicas share
// (docs/postgres.md). Records are JSONB rows, one table per collection, in the same disk form as the
// embedded store's (sealed fields stay ciphertext in the database). A transaction is a SERIALIZABLE
// PostgreSQL transaction, run again on a serialisation failure or a deadlock, and it resolves after
// COMMIT returns with synchronous_commit on: durable. onCommit hears this replica's commits at once and
// the others' through LISTEN/NOTIFY. While the database cannot be reached every read and write fails
// fast with STORE_UNAVAILABLE (503) and writeBlocker() says why; a probe notices its return. A write the
// server refuses because it cannot write (a full disk, an I/O error, read-only) is 503 too, and
// writeBlocker() names it until a write succeeds again: a transaction that wrote, or probeWrite().
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { GpufleetError } from '../../model/index.ts';
import { RecordCodec } from '../base/record-codec.ts';
import type { SecretBox } from '../base/secret-box.ts';
import type { CollectionName, CommitInfo, RecordOf, Store, StoreChange, StoreObserver, StoreTx, TxOptions, Where } from '../base/store.ts';
import type { GpuClaim } from './gpu-claims.ts';
import { ChangeFeed } from './pg-change-feed.ts';
import { HostCapacityConflict, isCapacityConflict, type HostLoadRule } from './host-capacity.ts';
import { cannotWrite, describeDatabaseError, isAddressConflict, isClaimConflict, isRetryable, isServerShort, isUnreachable, unavailable } from './pg-errors.ts';
import { countSql, impossibleId, ROW_COLUMNS, RowCache, selectSql, type Row } from './pg-rows.ts';
import { migrate, pendingMigrations, tableOf } from './pg-schema.ts';
import { PgTransaction } from './pg-transaction.ts';
import { checkSecretKey } from './secret-check.ts';
import { probeDatabaseWrite } from './write-probe.ts';

export interface PgStoreOptions {
  /** GPUFLEET_DATABASE_URL */
  url: string;
  /** seals env values (and is checked against the database's key check value) */
  secretBox: SecretBox;
  /** apply missing migrations at start (default); false: refuse a database that lacks one */
  migrate?: boolean;
  /** connections in the pool (shared with the job queue); default 20 */
  poolSize?: number;
  /** transactions this replica runs at once; default 8 */
  maxConcurrentTx?: number;
  observer?: StoreObserver;
  /** told of failures met on its own: the database lost (once per outage), a listener that threw */
  onError?: (error: GpufleetError) => void;
  /** told what it changed on its own: migrations applied, the database back */
  onNotice?: (message: string) => void;
  /**
   * the placer's rule (fleet's hostLoadRule): with it, a transaction that places pods on a host
   * re-checks the host's vCPU, memory and disk in the database before it commits; without it only GPUs
   * are held across replicas
   */
  hostLoad?: HostLoadRule;
}

/** how long a transaction is run again after serialisation failures before it answers 503 */
const RETRY_BUDGET_MS = 15_000;
/** how often a transaction places again after its GPUs or its host's room were taken by another before it gives up */
const CLAIM_RETRIES = 25;
/** between probes of an unreachable database */
const PROBE_MS = 250;

/** a failed attempt: its error, and what to look up when its placement conflicted (GPUs claimed, a host overcommitted) */
type Attempt<T> = { ok: true; value: T } | { ok: false; error: unknown; claims: GpuClaim[]; hosts: string[] };

export class PgStore implements Store {
  /** the pool the store uses; the PostgreSQL job queue shares it */
  readonly pool: pg.Pool;
  /** this process among the replicas (its own NOTIFYs are skipped) */
  readonly origin = randomUUID();
  private readonly rows: RowCache;
  private readonly feed: ChangeFeed;
  private closed = false;
  /** why the database is unreachable, or null */
  private down: string | null = null;
  /** the server's last refusal of a write because it cannot write (pg-errors.ts cannotWrite), until a write succeeds again */
  private unwritable: string | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly onError: (e: GpufleetError) => void;
  private readonly onNotice: (m: string) => void;

  private constructor(
    pool: pg.Pool,
    clientConfig: pg.ClientConfig,
    secretBox: SecretBox,
    private readonly opts: PgStoreOptions,
  ) {
    this.pool = pool;
    this.rows = new RowCache(new RecordCodec(secretBox));
    this.onError = opts.onError ?? ((e) => process.emitWarning(e.message, { code: 'GPUFLEET_STORE' }));
    this.onNotice = opts.onNotice ?? ((m) => process.emitWarning(m, { code: 'GPUFLEET_STORE' }));
    this.feed = new ChangeFeed(pool, clientConfig, this.rows, this.origin, (e) => this.markDown(e), this.onError);
  }

  static async open(opts: PgStoreOptions): Promise<PgStore> {
    const clientConfig: pg.ClientConfig = { connectionString: opts.url, connectionTimeoutMillis: 5_000, keepAlive: true, application_name: 'gpufleet' };
    const pool = new pg.Pool({ ...clientConfig, max: opts.poolSize ?? 20 });
    let store: PgStore | undefined;
    // an idle connection that breaks: the database went away (handled, or it would end the process)
    pool.on('error', (e) => store?.markDown(e));
    // a checked-out connection that breaks between two statements emits 'error' on the client, which
    // the pool does not listen to while it is lent out: every client gets a listener of its own for its
    // whole life (the statement in flight still fails with the error and decides what happens)
    pool.on('connect', (client) => client.on('error', (e) => store?.markDown(e)));
    try {
      if (opts.migrate === false) {
        const pending = await pendingMigrations(pool);
        if (pending.length > 0)
          throw new GpufleetError('INTERNAL', `the database lacks schema migrations ${pending.join(', ')}: run gpufleet db migrate`, { fields: { pending } });
      } else {
        const { applied } = await migrate(pool);
        if (applied.length > 0) (opts.onNotice ?? (() => undefined))(`store: applied database migrations ${applied.join(', ')}`);
      }
      await checkSecretKey(pool, opts.secretBox);
      store = new PgStore(pool, clientConfig, opts.secretBox, opts);
      await store.feed.start();
      return store;
    } catch (e) {
      await pool.end().catch(() => undefined);
      if (isUnreachable(e))
        throw new GpufleetError('INTERNAL', `cannot reach the database of GPUFLEET_DATABASE_URL: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      throw e;
    }
  }

  // ---- reads: each one asks the database (read committed: only durable writes are seen)

  private async read<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    this.assertUsable();
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      // a read the server cannot serve now (out of memory, connections, a failed file read): 503, the store's state untouched
      if (isServerShort(e) || cannotWrite(e)) throw unavailable(e, `The database cannot answer now (${describeDatabaseError(e)}); nothing was read. Try again.`);
      if (!isUnreachable(e)) throw e;
      this.markDown(e);
      throw unavailable(e, 'The database cannot be reached; nothing was read. Try again.');
    }
  }

  async get<C extends CollectionName>(c: C, id: string): Promise<RecordOf<C> | undefined> {
    if (impossibleId(id)) return undefined;
    const { rows } = await this.read<Row>(`SELECT ${ROW_COLUMNS} FROM ${tableOf(c)} WHERE id = $1`, [id]);
    return rows[0] ? (this.rows.decode(c, rows[0]) as unknown as RecordOf<C>) : undefined;
  }

  async list<C extends CollectionName>(c: C, where?: Where<C>): Promise<RecordOf<C>[]> {
    const { text, values } = selectSql(c, where as Record<string, unknown> | undefined);
    const { rows } = await this.read<Row>(text, values);
    return rows.map((r) => this.rows.decode(c, r)) as unknown as RecordOf<C>[];
  }

  async count<C extends CollectionName>(c: C, where?: Where<C>): Promise<number> {
    const { text, values } = countSql(c, where as Record<string, unknown> | undefined);
    return (await this.read<{ n: number }>(text, values)).rows[0]?.n ?? 0;
  }

  onCommit(listener: (changes: StoreChange[], commit: CommitInfo) => void): () => void {
    this.feed.listeners.add(listener);
    return () => this.feed.listeners.delete(listener);
  }

  writeBlocker(): string | null {
    if (this.closed) return 'the store is closed';
    if (this.down) return `the database cannot be reached: ${this.down}`;
    return this.unwritable ? `the database cannot write: ${this.unwritable}` : null;
  }

  /**
   * While a write was refused because the database cannot write: a write of its own (write-probe.ts,
   * rolled back) that clears writeBlocker() once the database takes writes again. /readyz calls it.
   */
  async probeWrite(): Promise<void> {
    this.assertUsable();
    try {
      await probeDatabaseWrite(this.pool);
    } catch (e) {
      if (cannotWrite(e)) this.markUnwritable(e);
      else if (isUnreachable(e)) this.markDown(e);
      throw e;
    }
    this.markWritable();
  }

  // ---- transactions

  transact<T>(fn: (tx: StoreTx) => Promise<T> | T, opts: TxOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const run = this.runWithRetries(fn, opts.actor);
    this.inFlight.add(run);
    void run.catch(() => undefined).finally(() => this.inFlight.delete(run));
    return run;
  }

  private async runWithRetries<T>(fn: (tx: StoreTx) => Promise<T> | T, actor: string | undefined): Promise<T> {
    await this.slot();
    try {
      const started = Date.now();
      let placementConflicts = 0;
      for (let attempt = 1; ; attempt++) {
        this.assertUsable();
        const r = await this.attempt(fn, actor);
        if (r.ok) return r.value;
        const e = r.error;
        if (isRetryable(e) || isAddressConflict(e)) {
          if (Date.now() - started > RETRY_BUDGET_MS)
            throw unavailable(e, `The transaction kept conflicting with concurrent ones for ${RETRY_BUDGET_MS / 1000} s; nothing of it was applied. Try again.`);
          await sleep(Math.random() * Math.min(100, 2 ** attempt));
          continue;
        }
        if (isClaimConflict(e) || isCapacityConflict(e)) {
          if (++placementConflicts > CLAIM_RETRIES) throw placementGaveUp(e);
          await this.feed.catchUp(isClaimConflict(e) ? r.claims : [], r.hosts).catch((err: unknown) => {
            throw isUnreachable(err) ? unavailable(err, 'The database cannot be reached; nothing was applied. Try again.') : err;
          });
          continue;
        }
        if (isUnreachable(e)) {
          this.markDown(e);
          throw unavailable(e, 'The database could not be reached to complete this write; it was not acknowledged (if the connection broke during COMMIT, it may have been applied). Try again.');
        }
        if (cannotWrite(e)) {
          this.markUnwritable(e);
          throw unavailable(e, `The database cannot write now (${describeDatabaseError(e)}); nothing of this write was applied. Try again.`);
        }
        if (isServerShort(e)) throw unavailable(e, `The database is short of resources now (${describeDatabaseError(e)}); nothing was applied. Try again.`);
        throw e;
      }
    } finally {
      this.release();
    }
  }

  private async attempt<T>(fn: (tx: StoreTx) => Promise<T> | T, actor: string | undefined): Promise<Attempt<T>> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      return { ok: false, error: e, claims: [], hosts: [] };
    }
    const tx = new PgTransaction(client, this.rows, this.opts.hostLoad);
    let broken: Error | undefined;
    /** what fn threw by itself (no statement failed): the caller's error, passed on as it is */
    let own = null as { error: unknown } | null;
    try {
      await tx.begin();
      let value: T;
      try {
        value = await fn(tx);
      } catch (e) {
        // a statement failed (the transaction is aborted): that failure decides, whatever fn made of it
        if (tx.failure) throw tx.failure;
        own = { error: e };
        throw e;
      }
      if (tx.failure) throw tx.failure;
      let written: Awaited<ReturnType<PgTransaction['write']>>;
      try {
        written = await tx.write(actor, this.origin);
      } catch (e) {
        // a statement failed: that failure decides. Otherwise the commit step's own code threw: a
        // refusal of ours (GpufleetError: not storable, a host without room) takes its own path below,
        // and anything else is a bug, passed on as it is (a 500), never taken for the database being down
        if (tx.failure) throw tx.failure;
        if (!(e instanceof GpufleetError)) own = { error: e };
        throw e;
      }
      const appliedAt = performance.now();
      await client.query('COMMIT');
      if (written) {
        this.opts.observer?.committed((performance.now() - appliedAt) / 1000);
        this.markWritable();
        this.feed.announceLocal(written.ops, written.rev, actor);
      }
      return { ok: true, value };
    } catch (e) {
      if (own !== null && own.error === e) {
        await client.query('ROLLBACK').catch((err: unknown) => {
          broken = err instanceof Error ? err : new Error(String(err));
        });
        throw e;
      }
      if (isUnreachable(e)) broken = e instanceof Error ? e : new Error(String(e));
      else
        await client.query('ROLLBACK').catch((err: unknown) => {
          broken = err instanceof Error ? err : new Error(String(err));
        });
      if (isRetryable(e) || isAddressConflict(e) || isClaimConflict(e) || isCapacityConflict(e) || isUnreachable(e) || cannotWrite(e) || isServerShort(e))
        return { ok: false, error: e, claims: tx.claims, hosts: isCapacityConflict(e) ? [e.hostId] : [] };
      throw e;
    } finally {
      client.release(broken);
    }
  }

  /** transactions this replica runs at once (the rest wait their turn, in order) */
  private async slot(): Promise<void> {
    if (this.running < (this.opts.maxConcurrentTx ?? 8)) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  // ---- the database going away and coming back

  private assertUsable(): void {
    if (this.closed) throw new Error('store is closed');
    if (this.down) throw unavailable(new Error(this.down), `The database cannot be reached (${this.down}); nothing was applied. Try again.`);
  }

  private markDown(e: unknown): void {
    if (this.closed) return;
    const why = e instanceof Error ? e.message : String(e);
    if (this.down === null) {
      this.down = why || 'connection lost';
      this.onError(unavailable(e, `store: the database cannot be reached (${this.down}); requests answer 503 until it is back`));
    }
    this.probe();
  }

  /** A write refused because the database cannot write: the store says so (writeBlocker, /readyz) until a write succeeds. */
  private markUnwritable(e: unknown): void {
    if (this.closed) return;
    const why = describeDatabaseError(e);
    if (this.unwritable === null)
      this.onError(unavailable(e, `store: the database cannot write (${why}); writes answer 503 and /readyz names it until a write succeeds again`));
    this.unwritable = why;
  }

  private markWritable(): void {
    if (this.unwritable === null) return;
    this.unwritable = null;
    this.onNotice('store: the database takes writes again');
  }

  /** Until the database answers again and the change feed is listening (and caught up), every few hundred ms. */
  private probe(): void {
    if (this.probing || this.closed) return;
    this.probing = true;
    const tick = async () => {
      this.probeTimer = null;
      if (this.closed) return;
      try {
        await this.pool.query('SELECT 1');
        await this.feed.connect();
        this.probing = false;
        if (this.down !== null) {
          this.down = null;
          this.onNotice('store: the database is reachable again');
        }
      } catch {
        this.probeTimer = setTimeout(() => void tick(), PROBE_MS);
        this.probeTimer.unref();
      }
    };
    void tick();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.inFlight]);
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    await this.feed.close();
    // the job queue shares the pool and may still hold a connection (it is closed after or before
    // the store): the pool ends once that is released, without holding this close up
    const ended = this.pool.end().catch(() => undefined);
    await Promise.race([ended, sleep(1_000)]);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** After CLAIM_RETRIES placements in a row lost their GPUs or their host's room to concurrent ones: 400, never a 5xx. */
function placementGaveUp(e: unknown): GpufleetError {
  if (e instanceof HostCapacityConflict)
    return new GpufleetError('CAPACITY_UNAVAILABLE', 'The host this request was placed on kept being filled by concurrent requests; none has room for it now.', {
      cause: e,
      fields: { reason: 'capacity_taken_concurrently', constraint: e.constraint },
    });
  return new GpufleetError('CAPACITY_UNAVAILABLE', 'The GPUs this request was placed on kept being taken by concurrent requests; none is free for it now.', {
    cause: e,
    fields: { reason: 'gpus_taken_concurrently' },
  });
}
