// The host leases' rows in PostgreSQL (tables gf_replicas, gf_host_leases and gf_leaders,
// store/pg/pg-schema.ts migration 2; the port: store/base/shared-database.ts HostLeaseTable; which
// leases to renew, shed and take is core's, core/replicas/shared-host-leases.ts). Times are the
// database's clock (now()), so replicas whose clocks disagree still agree on expiry. Each call is one
// statement, atomic by itself, and a lease changes hands only by the conditional upsert (an expired or
// missing row), so two replicas racing for one host cannot both get it. A sync round's statements
// run on one connection, checked out once (`round`), each still committed by itself.
import type pg from 'pg';
import type { HostLeaseRound, HostLeaseTable } from '../../base/shared-database.ts';
import { isUnreachable } from '../pg-errors.ts';
import { giveUpLead, takeLead } from './pg-leadership.ts';

const hostsOf = (r: pg.QueryResult<{ host_id: string }>): string[] => r.rows.map((x) => x.host_id);

/** one sync round's statements, on the connection the round checked out */
class PgHostLeaseRound implements HostLeaseRound {
  constructor(private readonly db: pg.ClientBase) {}

  async heartbeat(replicaId: string, aliveMs: number): Promise<number> {
    const live = await this.db.query<{ n: number }>(
      `WITH me AS (INSERT INTO gf_replicas (id, seen_at) VALUES ($1, now()) ON CONFLICT (id) DO UPDATE SET seen_at = now() RETURNING id)
       SELECT (SELECT count(*) FROM gf_replicas WHERE id <> $1 AND seen_at > now() - $2 * interval '1 millisecond')::int + 1 AS n`,
      [replicaId, aliveMs],
    );
    return Math.max(1, live.rows[0]?.n ?? 1);
  }

  async forgetOldReplicas(): Promise<void> {
    await this.db.query(`DELETE FROM gf_replicas WHERE seen_at < now() - interval '1 hour'`);
  }

  async dropOthers(replicaId: string, hostIds: readonly string[]): Promise<string[]> {
    return hostsOf(await this.db.query('DELETE FROM gf_host_leases WHERE holder = $1 AND NOT (host_id = ANY($2::text[])) RETURNING host_id', [replicaId, hostIds]));
  }

  async renew(replicaId: string, ttlMs: number): Promise<string[]> {
    return hostsOf(
      await this.db.query(
        `UPDATE gf_host_leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE holder = $1 AND expires_at > now() RETURNING host_id`,
        [replicaId, ttlMs],
      ),
    );
  }

  async release(replicaId: string, hostIds: readonly string[]): Promise<string[]> {
    if (hostIds.length === 0) return [];
    return hostsOf(await this.db.query('DELETE FROM gf_host_leases WHERE holder = $1 AND host_id = ANY($2::text[]) RETURNING host_id', [replicaId, hostIds]));
  }

  async free(hostIds: readonly string[]): Promise<string[]> {
    const r = await this.db.query<{ h: string }>(
      `SELECT h FROM unnest($1::text[]) AS h WHERE NOT EXISTS (SELECT 1 FROM gf_host_leases x WHERE x.host_id = h AND x.expires_at > now())`,
      [hostIds],
    );
    return r.rows.map((x) => x.h);
  }

  async take(replicaId: string, hostIds: readonly string[], ttlMs: number): Promise<string[]> {
    if (hostIds.length === 0) return [];
    // the conditional upsert is what decides: a lease taken meanwhile is not expired any more
    return hostsOf(
      await this.db.query(
        `INSERT INTO gf_host_leases AS l (host_id, holder, expires_at)
           SELECT h, $1, now() + $2 * interval '1 millisecond' FROM unnest($3::text[]) WITH ORDINALITY AS u(h, i) ORDER BY i
         ON CONFLICT (host_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, epoch = l.epoch + 1
           WHERE l.expires_at <= now()
         RETURNING host_id`,
        [replicaId, ttlMs, hostIds],
      ),
    );
  }

  lead(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return takeLead(this.db, name, holder, ttlMs);
  }
}

export class PgHostLeaseTable implements HostLeaseTable {
  constructor(private readonly pool: pg.Pool) {}

  async round<T>(fn: (r: HostLeaseRound) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    // a connection lost between two statements must not end the process; it is destroyed, not given back
    let broken: Error | undefined;
    const onError = (e: Error): void => {
      broken = e;
    };
    c.on('error', onError);
    try {
      return await fn(new PgHostLeaseRound(c));
    } catch (e) {
      // a statement refused leaves the connection usable; one that lost it does not
      if (isUnreachable(e)) broken ??= e as Error;
      throw e;
    } finally {
      c.removeListener('error', onError);
      c.release(broken);
    }
  }

  async confirm(replicaId: string, hostId: string, ttlMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE gf_host_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE host_id = $1 AND holder = $2 AND expires_at > now()`,
      [hostId, replicaId, ttlMs],
    );
    return r.rowCount === 1;
  }

  async leave(replicaId: string, leadership: string): Promise<void> {
    await this.pool.query('DELETE FROM gf_host_leases WHERE holder = $1', [replicaId]);
    await giveUpLead(this.pool, leadership, replicaId);
    await this.pool.query('DELETE FROM gf_replicas WHERE id = $1', [replicaId]);
  }
}
