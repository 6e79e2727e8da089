// One attempt at a transaction on PostgreSQL: BEGIN ISOLATION LEVEL SERIALIZABLE on a pooled
// connection, reads through it (and through the transaction's own writes, kept here until the end),
// then at the end every write in a few statements: the rows (one rev for the whole transaction),
// the GPU claims of the pods it wrote, the capacity of each host its pods were placed on re-checked,
// and the change notification other replicas listen for. The caller commits; PostgreSQL delivers the
// notification only if the commit succeeds.
import type pg from 'pg';
import { deepFreeze, type AnyRecord } from '../base/memory-table.ts';
import { layered } from '../embedded/pending-layer.ts';
import type { CollectionName, RecordOf, StoreTx, Where } from '../base/store.ts';
import { CLAIMING_COLLECTIONS, claimsOf, sameClaims, type GpuClaim } from './gpu-claims.ts';
import { checkHostCapacity, hostsGainingLoad, type HostLoadRule } from './host-capacity.ts';
import { countSql, impossibleId, keyOf, ROW_COLUMNS, selectSql, type Row, type RowCache, type StoredRecord } from './pg-rows.ts';
import { tableOf } from './pg-schema.ts';
import { assertStorable } from './storable-text.ts';

export const CHANGES_CHANNEL = 'gpufleet_changes';
/** NOTIFY payloads must stay under 8000 bytes: a large transaction sends several */
const PAYLOAD_MAX = 6000;

export interface TxOp {
  c: string;
  id: string;
  /** the record as written, or null when deleted */
  v: AnyRecord | null;
}

/** What a NOTIFY carries: the origin replica, the actor, and [collection, id, deleted] of each change. */
export interface ChangePayload {
  o: string;
  a: string | null;
  c: [string, string, 0 | 1][];
}

export class PgTransaction implements StoreTx {
  private readonly overlay = new Map<string, Map<string, AnyRecord | null>>();
  /** versions read from the database here: the codec reuses their ciphertext, claims are compared */
  private readonly seen = new Map<string, AnyRecord | null>();
  /** the first statement that failed: the transaction is aborted, whatever `fn` did with the error */
  failure: unknown = null;
  /** the GPUs this transaction's pods claim (what to look up when the claim conflicts) */
  claims: GpuClaim[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    private readonly rows: RowCache,
    /** the placer's rule, to re-check each host this transaction places pods on (none: GPUs only) */
    private readonly hostLoad: HostLoadRule | undefined,
  ) {}

  private async q<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>(text, values);
    } catch (e) {
      this.failure ??= e;
      throw e;
    }
  }

  async begin(): Promise<void> {
    // synchronous_commit on for this transaction whatever the server's default: resolved means durable
    await this.q('BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL synchronous_commit TO on');
  }

  private decodeRows(c: string, rows: Row[]): AnyRecord[] {
    return rows.map((row) => {
      const rec = this.rows.decode(c, row);
      this.seen.set(keyOf(c, row.id), rec);
      return rec;
    });
  }

  async get<C extends CollectionName>(c: C, id: string): Promise<RecordOf<C> | undefined> {
    const o = this.overlay.get(c);
    if (o?.has(id)) return (o.get(id) ?? undefined) as RecordOf<C> | undefined;
    if (impossibleId(id)) return undefined;
    const r = await this.q<Row>(`SELECT ${ROW_COLUMNS} FROM ${tableOf(c)} WHERE id = $1`, [id]);
    const [rec] = this.decodeRows(c, r.rows);
    if (!rec) this.seen.set(keyOf(c, id), null);
    return rec as RecordOf<C> | undefined;
  }

  async list<C extends CollectionName>(c: C, where?: Where<C>): Promise<RecordOf<C>[]> {
    const { text, values, entries } = selectSql(c, where as Record<string, unknown> | undefined);
    const base = this.decodeRows(c, (await this.q<Row>(text, values)).rows);
    return layered(base, this.overlay.get(c), entries) as unknown as RecordOf<C>[];
  }

  async count<C extends CollectionName>(c: C, where?: Where<C>): Promise<number> {
    if (this.overlay.has(c)) return (await this.list(c, where)).length;
    const { text, values } = countSql(c, where as Record<string, unknown> | undefined);
    return (await this.q<{ n: number }>(text, values)).rows[0]?.n ?? 0;
  }

  put<C extends CollectionName>(c: C, record: RecordOf<C>): void {
    tableOf(c);
    const rec = deepFreeze(structuredClone(record)) as unknown as AnyRecord;
    this.staged(c).set(rec.id, rec);
  }

  delete<C extends CollectionName>(c: C, id: string): void {
    tableOf(c);
    this.staged(c).set(id, null);
  }

  private staged(c: string): Map<string, AnyRecord | null> {
    let m = this.overlay.get(c);
    if (!m) this.overlay.set(c, (m = new Map()));
    return m;
  }

  /**
   * Writes what the transaction staged and queues its notification; answers the ops and the rev they
   * were written with, or null when it wrote nothing.
   */
  async write(actor: string | undefined, origin: string): Promise<{ ops: TxOp[]; rev: number } | null> {
    const ops: TxOp[] = [];
    for (const [c, m] of this.overlay) for (const [id, v] of m) ops.push({ c, id, v });
    if (ops.length === 0) return null;
    const rev = (await this.q<{ rev: string }>("SELECT nextval('gf_rev')::text AS rev")).rows[0]!.rev;
    for (const [c, m] of this.overlay) {
      const t = tableOf(c);
      const puts: StoredRecord[] = [];
      const deletes: string[] = [];
      for (const [id, v] of m) {
        if (v === null) deletes.push(id);
        // sealed as on disk; an env left as it was keeps the ciphertext of the version read
        else {
          const stored = this.rows.codec.encode(c, v as StoredRecord, (this.seen.get(keyOf(c, id)) ?? undefined) as StoredRecord | undefined);
          assertStorable(c, stored);
          puts.push(stored);
        }
      }
      if (puts.length > 0)
        await this.q(
          `INSERT INTO ${t} (id, ord, rev, data) SELECT e ->> 'id', $1::bigint * 65536 + n, $1::bigint, e FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS x(e, n) ` +
            'ON CONFLICT (id) DO UPDATE SET rev = EXCLUDED.rev, data = EXCLUDED.data',
          [rev, JSON.stringify(puts)],
        );
      if (deletes.length > 0) await this.q(`DELETE FROM ${t} WHERE id = ANY($1::text[])`, [deletes]);
      if (CLAIMING_COLLECTIONS.has(c)) await this.writeClaims(c, m);
    }
    const pods = this.overlay.get('pods');
    const rule = this.hostLoad;
    if (pods && rule) await checkHostCapacity(rule, (text, values) => this.q(text, values), hostsGainingLoad(rule, pods, (id) => this.seen.get(keyOf('pods', id))));
    const entries: [string, string, 0 | 1][] = ops.map((o) => [o.c, o.id, o.v === null ? 1 : 0]);
    for (const chunk of chunks(entries, origin, actor ?? null))
      await this.q('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify(chunk)]);
    return { ops, rev: Number(rev) };
  }

  /** Rewrites the GPU claims of the records whose claims changed (a record read here unchanged is skipped). */
  private async writeClaims(c: string, m: Map<string, AnyRecord | null>): Promise<void> {
    const owners: string[] = [];
    const added: GpuClaim[] = [];
    const addedOwners: string[] = [];
    for (const [id, v] of m) {
      const now = claimsOf(c, v);
      const before = this.seen.get(keyOf(c, id));
      if (before !== undefined && sameClaims(claimsOf(c, before), now)) continue;
      owners.push(id);
      for (const claim of now) {
        added.push(claim);
        addedOwners.push(id);
      }
    }
    if (owners.length > 0) await this.q('DELETE FROM gf_gpu_claims WHERE owner_id = ANY($1::text[])', [owners]);
    if (added.length === 0) return;
    this.claims = added;
    await this.q('INSERT INTO gf_gpu_claims (host_id, gpu_uuid, owner_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])', [
      added.map((a) => a.hostId),
      added.map((a) => a.gpuUuid),
      addedOwners,
    ]);
  }
}

function chunks(entries: [string, string, 0 | 1][], origin: string, actor: string | null): ChangePayload[] {
  const out: ChangePayload[] = [];
  let cur: ChangePayload = { o: origin, a: actor, c: [] };
  let size = 64 + origin.length + (actor?.length ?? 0);
  for (const e of entries) {
    const len = e[0].length + e[1].length + 12;
    if (cur.c.length > 0 && size + len > PAYLOAD_MAX) {
      out.push(cur);
      cur = { o: origin, a: actor, c: [] };
      size = 64 + origin.length + (actor?.length ?? 0);
    }
    cur.c.push(e);
    size += len;
  }
  if (cur.c.length > 0) out.push(cur);
  return out;
}
