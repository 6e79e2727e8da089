// Host leases in PostgreSQL (tables gf_replicas and gf_host_leases, store/pg/pg-schema.ts migration 2; the port: store/base/shared-database.ts, core/replicas the rules).
// Times are the database's clock (now()), so replicas whose clocks disagree still agree on expiry.
// A sync is a handful of short statements on one pooled connection; each is atomic by itself, and a
// lease changes hands only by the conditional upsert (an expired or missing row), so two replicas
// racing for one host cannot both get it.
import type pg from 'pg';
import type { HostLeases, LeaseSync } from '../../base/shared-database.ts';
import { FLEET_LEADERSHIP, giveUpLead, takeLead } from './pg-leadership.ts';

export interface PgHostLeasesOptions {
  /** lease lifetime from its last renewal; default 5000 ms (a dead replica's hosts move within ttl + one sync) */
  ttlMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 5_000;

export class PgHostLeases implements HostLeases {
  readonly shared = true;
  readonly ttlMs: number;
  private syncs = 0;

  constructor(
    private readonly pool: pg.Pool,
    readonly replicaId: string,
    opts: PgHostLeasesOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  }

  async sync(hostIds: readonly string[], busy: ReadonlySet<string>): Promise<LeaseSync> {
    const c = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const me = this.replicaId;
      const ttl = this.ttlMs;
      // alive: this replica's row, refreshed; the others whose rows are younger than a lease
      const live = await c.query<{ n: number }>(
        `WITH me AS (INSERT INTO gf_replicas (id, seen_at) VALUES ($1, now()) ON CONFLICT (id) DO UPDATE SET seen_at = now() RETURNING id)
         SELECT (SELECT count(*) FROM gf_replicas WHERE id <> $1 AND seen_at > now() - $2 * interval '1 millisecond')::int + 1 AS n`,
        [me, ttl],
      );
      if (++this.syncs % 1000 === 1) await c.query(`DELETE FROM gf_replicas WHERE seen_at < now() - interval '1 hour'`);
      const replicas = Math.max(1, live.rows[0]?.n ?? 1);
      const fair = Math.ceil(hostIds.length / replicas);
      // leases of hosts that are gone are dropped; the live ones renewed
      const gone = await c.query<{ host_id: string }>(
        'DELETE FROM gf_host_leases WHERE holder = $1 AND NOT (host_id = ANY($2::text[])) RETURNING host_id',
        [me, hostIds],
      );
      const renewed = await c.query<{ host_id: string }>(
        `UPDATE gf_host_leases SET expires_at = now() + $2 * interval '1 millisecond'
         WHERE holder = $1 AND expires_at > now() RETURNING host_id`,
        [me, ttl],
      );
      let held = renewed.rows.map((r) => r.host_id);
      const released = gone.rows.map((r) => r.host_id);
      // over the fair share (a replica joined): give up the excess that has no pass in flight
      if (held.length > fair) {
        const excess = held.filter((h) => !busy.has(h)).slice(0, held.length - fair);
        if (excess.length > 0) {
          const dropped = await c.query<{ host_id: string }>('DELETE FROM gf_host_leases WHERE holder = $1 AND host_id = ANY($2::text[]) RETURNING host_id', [
            me,
            excess,
          ]);
          const d = new Set(dropped.rows.map((r) => r.host_id));
          held = held.filter((h) => !d.has(h));
          released.push(...d);
        }
      }
      const taken: string[] = [];
      const want = fair - held.length;
      if (want > 0) {
        // free or expired leases; a random pick of them, so replicas racing for them mostly ask for
        // different ones, written in host order, so two such writes never wait on each other in a cycle
        const free = await c.query<{ h: string }>(
          `SELECT h FROM unnest($1::text[]) AS h WHERE NOT EXISTS (SELECT 1 FROM gf_host_leases x WHERE x.host_id = h AND x.expires_at > now())`,
          [hostIds],
        );
        const pick = shuffle(free.rows.map((r) => r.h)).slice(0, want).sort();
        // the conditional upsert is what decides: a lease taken meanwhile is not expired any more
        const got = await c.query<{ host_id: string }>(
          `INSERT INTO gf_host_leases AS l (host_id, holder, expires_at)
             SELECT h, $1, now() + $2 * interval '1 millisecond' FROM unnest($3::text[]) WITH ORDINALITY AS u(h, i) ORDER BY i
           ON CONFLICT (host_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, epoch = l.epoch + 1
             WHERE l.expires_at <= now()
           RETURNING host_id`,
          [me, ttl, pick],
        );
        for (const r of got.rows) taken.push(r.host_id);
        held.push(...taken);
      }
      // the leadership: kept by its holder, taken by anyone once it has run out
      const leader = await takeLead(c, FLEET_LEADERSHIP, me, ttl);
      return { held, taken, released, leader };
    } catch (e) {
      broken = e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      c.release(broken);
    }
  }

  async confirm(hostId: string): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE gf_host_leases SET expires_at = now() + $3 * interval '1 millisecond'
       WHERE host_id = $1 AND holder = $2 AND expires_at > now()`,
      [hostId, this.replicaId, this.ttlMs],
    );
    return r.rowCount === 1;
  }

  async releaseAll(): Promise<void> {
    await this.pool.query('DELETE FROM gf_host_leases WHERE holder = $1', [this.replicaId]);
    await giveUpLead(this.pool, FLEET_LEADERSHIP, this.replicaId);
    await this.pool.query('DELETE FROM gf_replicas WHERE id = $1', [this.replicaId]);
  }
}

function shuffle<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
