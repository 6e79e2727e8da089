// When the PostgreSQL queue applies due deadlines (what it does with each row: deadlines.ts). Every
// deadline of a row is one column, due_at. A sweep claims due rows with FOR UPDATE SKIP LOCKED,
// SWEEP_BATCH at a time, so several replicas sweep without fighting. It runs on the queue's interval
// timer and before an operation once the earliest due_at this replica knows of has passed, so an
// operation sees due deadlines applied, as on the embedded queue.
import type { JobRowsTx } from '../../../store/index.ts';
import { dueWork, type DueRules } from './deadlines.ts';
import type { Effects } from './effects.ts';
import { closedError, type QueueDb } from './queue-db.ts';

/** rows a sweep transaction claims at most */
const SWEEP_BATCH = 200;

export interface SweepRules extends DueRules {
  /** the soonest deadline a write (here or on another replica) can make, from its own now */
  minGapMs: number;
}

export class DeadlineSweeper {
  private sweptAt = Number.NEGATIVE_INFINITY;
  /**
   * No row is due before this, as far as this replica knows: the last probe's earliest due_at, but
   * at most `minGapMs` after it (a deadline made since by another replica is never sooner than that),
   * lowered by every deadline this replica writes. Operations sweep first only once it has passed.
   */
  private nextDue = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | null = null;

  constructor(private readonly db: QueueDb, private readonly rules: SweepRules) {}

  /** every operation starts here: due deadlines first (once per tick of the clock, shared by concurrent callers) */
  begin(): Promise<void> {
    if (this.db.closed) return Promise.reject(closedError());
    const now = this.db.now();
    if (now <= this.sweptAt || now < this.nextDue) return this.sweeping ?? Promise.resolve();
    return this.sweep();
  }

  /** applies every deadline that is due (the interval timer calls this too); replicas each claim other rows */
  sweep(): Promise<void> {
    if (this.db.closed) return Promise.reject(closedError());
    this.sweptAt = this.db.now();
    const run = this.sweepDue(this.sweptAt).finally(() => {
      if (this.sweeping === run) this.sweeping = null;
    });
    this.sweeping = run;
    return run;
  }

  /** a deadline this replica is about to write */
  noteDue(at: number | null): void {
    if (at !== null && at < this.nextDue) this.nextDue = at;
  }

  private async sweepDue(now: number): Promise<void> {
    const soonest = (await this.db.call((r) => r.soonestDue())) ?? Number.POSITIVE_INFINITY;
    if (soonest > now) {
      this.nextDue = Math.min(soonest, now + this.rules.minGapMs);
      return;
    }
    this.nextDue = Number.NEGATIVE_INFINITY; // swept now: the next operation looks again
    for (;;) {
      const claimed = await this.db.tx((c, fx) => this.sweepBatch(c, fx, now));
      if (claimed < SWEEP_BATCH) return;
    }
  }

  /** one transaction's worth of due rows; answers how many it claimed */
  private async sweepBatch(c: JobRowsTx, fx: Effects, now: number): Promise<number> {
    const rows = await c.lockDue(now, SWEEP_BATCH);
    const { items, gone, stale } = dueWork(rows, now, this.rules, fx);
    await this.db.applyRecs(c, fx, items);
    await this.db.writeRows(c, stale);
    await c.remove(gone);
    return rows.length;
  }
}
