// onCommit across replicas. A transaction's NOTIFY names the ids it wrote; each replica LISTENs, skips
// its own (announced locally right after COMMIT, with the records as written), fetches the others'
// rows and announces them. Every announcement carries the row's rev, and a version is announced only
// when it is newer than the last one announced for that id, so a fetch that raced a newer commit never
// takes a listener backwards. A NOTIFY lost with a dropped connection is made good on reconnect: the
// feed compares every (id, rev) with what it announced and announces the difference (deletions too).
import pg from 'pg';
import { GpufleetError } from '../../model/index.ts';
import { COLLECTION_NAMES } from '../../model/index.ts';
import type { CommitInfo, StoreChange } from '../base/store.ts';
import { keyOf, ROW_COLUMNS, type Row, type RowCache } from './pg-rows.ts';
import { tableOf } from './pg-schema.ts';
import { CHANGES_CHANNEL, type ChangePayload, type TxOp } from './pg-transaction.ts';
import type { GpuClaim } from './gpu-claims.ts';

export type CommitListener = (changes: StoreChange[], commit: CommitInfo) => void;

export class ChangeFeed {
  readonly listeners = new Set<CommitListener>();
  /** collection+id → the rev last announced (every record that exists, as far as this replica knows) */
  private readonly announced = new Map<string, number>();
  private client: pg.Client | null = null;
  /** remote notifications and resyncs, one at a time and in order */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
    private readonly rows: RowCache,
    private readonly origin: string,
    /** the listening connection failed or closed: the store marks the database down and probes */
    private readonly lost: (e: unknown) => void,
    private readonly onError: (e: GpufleetError) => void,
  ) {}

  /** Learns the current (id, rev) of every record, then listens. */
  async start(): Promise<void> {
    for (const [key, rev] of await this.revs()) this.announced.set(key, rev);
    await this.connect();
  }

  get listening(): boolean {
    return this.client !== null;
  }

  /** (Re)opens the listening connection; after a loss, announces what changed meanwhile. */
  async connect(): Promise<void> {
    if (this.closed) return;
    if (!this.client) await this.listen();
    if (this.needResync) {
      this.needResync = false;
      await this.enqueueAndWait(() => this.resync()).catch((e: unknown) => {
        this.needResync = true;
        throw e;
      });
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client(this.clientConfig);
    const drop = (e: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.needResync = true;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (!this.closed) this.lost(e);
    };
    client.on('error', drop);
    client.on('end', () => drop(new Error('the listening connection closed')));
    client.on('notification', (msg) => {
      if (msg.channel !== CHANGES_CHANNEL || !msg.payload) return;
      const payload = msg.payload;
      this.enqueue(() => this.remote(payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (e) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw e;
    }
    this.client = client;
  }

  /** a notification may have been missed (a lost connection, a failed fetch); the first connect covers the gap after start()'s read */
  private needResync = true;

  /** A commit of this replica, announced as it was written. */
  announceLocal(ops: TxOp[], rev: number, actor: string | undefined): void {
    const changes: StoreChange[] = [];
    for (const op of ops) {
      const key = keyOf(op.c, op.id);
      if (op.v === null) {
        this.announced.delete(key);
        this.rows.forget(op.c, op.id);
        changes.push({ collection: op.c, id: op.id, deleted: true } as StoreChange);
      } else {
        if ((this.announced.get(key) ?? -1) >= rev) continue;
        this.announced.set(key, rev);
        this.rows.remember(op.c, op.id, rev, op.v);
        changes.push({ collection: op.c, id: op.id, deleted: false, record: op.v } as unknown as StoreChange);
      }
    }
    this.emit(changes, { actor });
  }

  /** Another replica committed: fetch the rows it names and announce the newer versions. */
  private async remote(text: string): Promise<void> {
    let payload: ChangePayload;
    try {
      payload = JSON.parse(text) as ChangePayload;
    } catch {
      return;
    }
    if (payload.o === this.origin || !Array.isArray(payload.c)) return;
    const byCollection = new Map<string, Set<string>>();
    for (const [c, id] of payload.c) {
      let ids = byCollection.get(c);
      if (!ids) byCollection.set(c, (ids = new Set()));
      ids.add(id);
    }
    const deleted = new Set(payload.c.filter((e) => e[2] === 1).map((e) => keyOf(e[0], e[1])));
    const changes = await this.fetch(byCollection, deleted);
    this.emit(changes, { actor: payload.a ?? undefined });
  }

  /**
   * A placement this replica proposed conflicted: announce the records holding those GPUs now (a GPU
   * claim was taken), and the hosts and every pod on them (a host had no room left), so the placer's
   * next proposal knows them (their NOTIFY may not have arrived yet). Only versions newer than the
   * ones announced are announced.
   */
  async catchUp(claims: GpuClaim[], hostIds: string[] = []): Promise<void> {
    const pods = new Set<string>();
    if (claims.length > 0) {
      const { rows } = await this.pool.query<{ owner_id: string }>(
        'SELECT DISTINCT owner_id FROM gf_gpu_claims WHERE (host_id, gpu_uuid) IN (SELECT * FROM unnest($1::text[], $2::text[]))',
        [claims.map((c) => c.hostId), claims.map((c) => c.gpuUuid)],
      );
      for (const r of rows) pods.add(r.owner_id);
    }
    if (hostIds.length > 0) {
      const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM ${tableOf('pods')} WHERE data -> 'hostId' = ANY($1::jsonb[])`, [
        hostIds.map((id) => JSON.stringify(id)),
      ]);
      for (const r of rows) pods.add(r.id);
    }
    const byCollection = new Map<string, Set<string>>();
    if (hostIds.length > 0) byCollection.set('hosts', new Set(hostIds));
    if (pods.size > 0) byCollection.set('pods', pods);
    if (byCollection.size === 0) return;
    await this.enqueueAndWait(async () => this.emit(await this.fetch(byCollection, new Set()), { actor: undefined }));
  }

  private async fetch(byCollection: Map<string, Set<string>>, deleted: Set<string>): Promise<StoreChange[]> {
    const changes: StoreChange[] = [];
    for (const [c, ids] of byCollection) {
      let t: string;
      try {
        t = tableOf(c);
      } catch {
        continue; // a collection a newer replica knows and this one does not
      }
      const { rows } = await this.pool.query<Row>(`SELECT ${ROW_COLUMNS} FROM ${t} WHERE id = ANY($1::text[])`, [[...ids]]);
      const found = new Map(rows.map((r) => [r.id, r]));
      for (const id of ids) {
        const key = keyOf(c, id);
        const row = found.get(id);
        if (row) {
          const rev = Number(row.rev);
          if ((this.announced.get(key) ?? -1) >= rev) continue;
          this.announced.set(key, rev);
          changes.push({ collection: c, id, deleted: false, record: this.rows.decode(c, row) } as unknown as StoreChange);
        } else if (this.announced.has(key) || deleted.has(key)) {
          this.announced.delete(key);
          this.rows.forget(c, id);
          changes.push({ collection: c, id, deleted: true } as StoreChange);
        }
      }
    }
    return changes;
  }

  /** After a lost connection: everything whose rev differs from what was announced, and what is gone. */
  private async resync(): Promise<void> {
    const now = await this.revs();
    const byCollection = new Map<string, Set<string>>();
    const add = (key: string) => {
      const [c, id] = key.split('\u0000') as [string, string];
      let ids = byCollection.get(c);
      if (!ids) byCollection.set(c, (ids = new Set()));
      ids.add(id);
    };
    for (const [key, rev] of now) if ((this.announced.get(key) ?? -1) < rev) add(key);
    for (const key of this.announced.keys()) if (!now.has(key)) add(key);
    if (byCollection.size === 0) return;
    this.emit(await this.fetch(byCollection, new Set()), { actor: undefined });
  }

  private async revs(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const c of COLLECTION_NAMES) {
      const { rows } = await this.pool.query<{ id: string; rev: string }>(`SELECT id, rev::text AS rev FROM ${tableOf(c)}`);
      for (const r of rows) out.set(keyOf(c, r.id), Number(r.rev));
    }
    return out;
  }

  private emit(changes: StoreChange[], commit: CommitInfo): void {
    if (changes.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(changes, commit);
      } catch (e) {
        this.onError(new GpufleetError('INTERNAL', `A store listener failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
      }
    }
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue = this.queue.then(job).catch((e: unknown) => {
      // the fetch failed (the database went away): the resync after reconnecting makes it good
      this.needResync = true;
      this.lost(e);
    });
  }

  private enqueueAndWait(job: () => Promise<void>): Promise<void> {
    const run = this.queue.then(job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    await this.queue.catch(() => undefined);
    if (c) await c.end().catch(() => undefined);
  }
}
