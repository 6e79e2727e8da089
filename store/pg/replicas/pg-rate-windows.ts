// Rate-limit windows shared by the replicas of one database (docs/rate-limits.md, "Several replicas"):
// one row per subject (account or address) with the start and the units used of each window, changed
// by one call of gf_rate_take (store/pg/pg-schema.ts migration 2), which counts the units in every
// window or in none, under the row's lock, with the database's clock deciding which windows are
// current. One round trip per request.
import type pg from 'pg';
import type { RateWindows, SharedWindowState } from '../../base/shared-database.ts';

export class PgRateWindows implements RateWindows {
  private sweptAt = 0;

  constructor(private readonly pool: pg.Pool) {}

  /** Counts `units` for `subject` in windows of `seconds` with `quotas`, unless one has fewer left. */
  async take(subject: string, seconds: readonly number[], quotas: readonly number[], units: number): Promise<SharedWindowState> {
    const r = await this.pool.query<{ now_s: string; starts: string[]; used: number[]; taken: boolean }>(
      'SELECT now_s::text, starts::text[] AS starts, used, taken FROM gf_rate_take($1, $2::int[], $3::int[], $4)',
      [subject, seconds, quotas, units],
    );
    const row = r.rows[0];
    if (!row) throw new Error('gf_rate_take answered no row');
    const now = Number(row.now_s);
    this.sweep(now);
    return { now, starts: row.starts.map(Number), used: row.used, taken: row.taken };
  }

  /** Gives `units` back in the windows that still start at `starts`. */
  async refund(subject: string, starts: readonly number[], units: number): Promise<void> {
    await this.pool.query('SELECT gf_rate_refund($1, $2::bigint[], $3)', [subject, starts, units]);
  }

  /** subjects whose day window has passed are dropped, by whichever replica gets there first each hour */
  private sweep(now: number): void {
    if (now < this.sweptAt) return;
    this.sweptAt = now + 3600;
    void this.pool.query('DELETE FROM gf_rate_limits WHERE starts[array_length(starts, 1)] < $1', [now - 86_400]).catch(() => undefined);
  }
}
