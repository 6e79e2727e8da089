// Charging public model jobs (docs/public-endpoints.md, "Charges"): a COMPLETED job of an endpoint
// that backs a slug costs its caller the `cost` its output reports (written by job-output.ts), as one
// `public-endpoint` billing record in integer micro-dollars (charge-record.ts). The record's id comes
// from the job's, so a job is charged at most once. The owner's own jobs are not charged.
//
// The charge is written when the job becomes final (`onFinal`); a charge that was not (the control
// plane stopped before it, or its write failed) is written by the sweep (charge-sweep.ts) from the
// jobs the queue still holds: at start, then every minute.
import type { BillingRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { AccountCredits } from '../billing/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { PublicEndpointCatalog } from './catalog.ts';
import { endHoldsOf } from '../billing/index.ts';
import { chargeRecord, hasCost } from './charge-record.ts';
import { CHARGE_SWEEP_MS, ChargeSweep, type ChargeSweepOptions, type ChargeSweepResult } from './charge-sweep.ts';
import { sweepHolds, type HoldSweepResult } from './hold-sweep.ts';
import type { Job } from '../../model/index.ts';

export interface PublicEndpointChargesOptions {
  /** a charge that could not be written (the job stays COMPLETED; the sweep tries again), a failed sweep; default a process warning */
  onError?: (err: unknown, what: string) => void;
  /** called after each charge is durable (tests, metrics) */
  onCharged?: (rec: BillingRecord) => void;
  /** charges written by the sweep, not when their job became final; default one process warning per sweep */
  onLate?: (recs: BillingRecord[]) => void;
  sweep?: ChargeSweepOptions;
  /** how old a hold must be before the hold sweep ends it (default HOLD_GRACE_MS) */
  holdGraceMs?: number;
}

const WARNING = 'GPUFLEET_PUBLIC_CHARGES';

export class PublicEndpointCharges {
  private readonly unsubscribe: () => void;
  /** charges under way from `onFinal`, by job id */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly sweeper: ChargeSweep;
  private readonly onError: (err: unknown, what: string) => void;
  private holdTimer: NodeJS.Timeout | undefined;
  private holdPass: Promise<void> | undefined;

  constructor(
    private readonly queue: JobQueue,
    private readonly store: Store,
    private readonly catalog: PublicEndpointCatalog,
    private readonly credits: AccountCredits,
    private readonly opts: PublicEndpointChargesOptions = {},
  ) {
    this.onError = opts.onError ?? ((e, what) => process.emitWarning(`${what} failed: ${e instanceof Error ? e.message : String(e)}`, { code: WARNING }));
    this.unsubscribe = queue.onFinal((job) => {
      // only a published model's output carries `cost`: every other job ends with a look for a hold
      // to release (one indexed read; a hold made after it is released by its submission or the sweep)
      const charged = job.status === 'COMPLETED' && hasCost(job.output);
      const p: Promise<void> = (charged ? this.charge(job) : Promise.resolve(undefined))
        .then((rec) => (rec ? undefined : this.releaseHolds(job)))
        .catch((e: unknown) => this.onError(e, `${charged ? 'charge' : 'release of the credit hold'} for job ${job.id}`))
        .finally(() => this.pending.delete(job.id));
      this.pending.set(job.id, p);
    });
    this.sweeper = new ChargeSweep(
      {
        queue,
        store,
        catalog,
        write: (rec) => this.write(rec),
        inFlight: (jobId) => this.pending.get(jobId),
        onError: this.onError,
        onLate: opts.onLate ?? lateWarning,
      },
      opts.sweep,
    );
  }

  /** starts the sweeps: a pass over every job the queue still holds now, then one every minute; holds likewise */
  start(): void {
    this.sweeper.start();
    if (this.holdTimer) return;
    const tick = (): void => {
      this.holdPass ??= this.sweepHolds()
        .then(() => undefined, (e: unknown) => this.onError(e, 'the sweep of credit holds'))
        .finally(() => (this.holdPass = undefined));
    };
    tick();
    const every = this.opts.sweep?.intervalMs ?? CHARGE_SWEEP_MS;
    if (every > 0) {
      this.holdTimer = setInterval(tick, every);
      this.holdTimer.unref();
    }
  }

  /** one pass over the credit holds now (hold-sweep.ts): those whose job is gone or final end */
  sweepHolds(): Promise<HoldSweepResult> {
    return sweepHolds({
      queue: this.queue,
      store: this.store,
      catalog: this.catalog,
      write: (rec) => this.write(rec),
      forget: (a) => this.credits.forget(a),
      clock: this.opts.sweep?.clock ?? Date.now,
      ...(this.opts.holdGraceMs !== undefined ? { graceMs: this.opts.holdGraceMs } : {}),
    });
  }

  /** one pass of the sweep now (after the one under way, if any) */
  sweep(): Promise<ChargeSweepResult> {
    return this.sweeper.sweep();
  }

  /** charges the job's caller (its hold ends with it); nothing when the job's endpoint backs no slug, or the caller owns it */
  async charge(job: Job): Promise<BillingRecord | undefined> {
    const entry = await this.catalog.forEndpoint(job.endpointId);
    const rec = entry && chargeRecord(job, entry);
    if (!rec) return undefined;
    await this.write(rec);
    return rec;
  }

  /** the job ended without a charge: its hold, if any, is released */
  private async releaseHolds(job: Job): Promise<void> {
    if ((await this.store.count('creditHolds', { jobId: job.id })) === 0) return;
    await this.credits.releaseJob(job.id, job.accountId);
  }

  /** stops the sweeps and listening; resolves once the charges under way are written */
  async close(): Promise<void> {
    clearInterval(this.holdTimer);
    await this.holdPass;
    await this.sweeper.stop();
    this.unsubscribe();
    await Promise.all([...this.pending.values()]);
  }

  /** the record, unless one with its id exists, and the end of the job's hold (settled); true when this call wrote it */
  private async write(rec: BillingRecord): Promise<boolean> {
    const written = await this.store.transact(async (tx) => {
      if (rec.jobId !== undefined) await endHoldsOf(tx, rec.jobId);
      if (await tx.get('billing', rec.id)) return false;
      tx.put('billing', rec);
      return true;
    });
    this.credits.forget(rec.accountId);
    if (written) this.opts.onCharged?.(rec);
    return written;
  }
}

function lateWarning(recs: BillingRecord[]): void {
  const ids = recs.slice(0, 5).map((r) => r.jobId).join(', ');
  process.emitWarning(
    `${recs.length} public model job(s) charged by the sweep, not when they became final (the control plane stopped, or the charge's write failed): ${ids}${recs.length > 5 ? ', …' : ''}`,
    { code: WARNING },
  );
}
