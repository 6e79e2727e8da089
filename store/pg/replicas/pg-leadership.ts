// Loops that must run on one replica at a time (docs/replicas.md, "Loops that run once in all"): each
// is led by the holder of its named row in gf_leaders (store/pg/pg-schema.ts, migration 2). The
// holder renews the row each time it asks; any replica takes it once it has run out. Times are the
// database's clock (now()), so replicas whose clocks disagree still agree on expiry. Two replicas
// asking at once: the conditional upsert lets exactly one of them have it (the other's update waits
// for the row, then finds it held and not expired).
import type pg from 'pg';
import type { Leadership } from '../../base/shared-database.ts';


/** renews `name` for `holder`, or takes it if it is free or has run out; true when `holder` has it now */
export async function takeLead(db: pg.Pool | pg.ClientBase, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO gf_leaders AS l (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE l.holder = $2 OR l.expires_at <= now()
     RETURNING holder`,
    [name, holder, ttlMs],
  );
  return r.rowCount === 1;
}

/** gives `name` up if `holder` has it, so another replica takes it at its next ask */
export async function giveUpLead(db: pg.Pool | pg.ClientBase, name: string, holder: string): Promise<void> {
  await db.query('DELETE FROM gf_leaders WHERE name = $1 AND holder = $2', [name, holder]);
}

/**
 * One named leadership, asked for by a loop before each round (the media sweeper): `lead()` answers
 * whether this replica runs the round, renewing the row for `ttlMs`. The lifetime must outlast the
 * time between two rounds, or the lead passes to whichever replica asks next.
 */
export class PgLeadership implements Leadership {
  constructor(
    private readonly pool: pg.Pool,
    readonly replicaId: string,
    readonly name: string,
    readonly ttlMs: number,
  ) {}

  lead(): Promise<boolean> {
    return takeLead(this.pool, this.name, this.replicaId, this.ttlMs);
  }

  /** a clean stop: the next replica to ask leads at once, without waiting for the row to run out */
  release(): Promise<void> {
    return giveUpLead(this.pool, this.name, this.replicaId);
  }
}
