// Charges that were never written (docs/public-endpoints.md, "Charges"): the control plane stopped
// (SIGKILL, a crash) between a public model job's final record and its charge, or the charge's write
// failed (the store down). The queue still holds the job for its retention (30 min after run, 1 min
// after runsync), with the cost in its output, so a sweep finds it there (JobQueue.completedJobs)
// and writes the record the hot path would have written (charge-record.ts: same id, so never twice).
//
// The first pass, at start, looks at every retained job. Later ones (every minute) look at the jobs
// finished since the start of the last pass that had no failure, less a lag: a final record can be
// committed after a pass read the queue with a finish time before that pass (commit latency, and with
// several replicas their clocks). A pass with a failure moves nothing on, so the next one covers
// the same jobs again, however long the store stays down (within the jobs' retention).
import type { BillingRecord, PublicEndpointRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { PublicEndpointCatalog } from './catalog.ts';
import { chargeRecord } from './charge-record.ts';
import type { Job } from '../../model/index.ts';

/** how often a sweep runs after the one at start */
export const CHARGE_SWEEP_MS = 60_000;
/** how far before the start of the last good pass the next one looks again */
export const CHARGE_SWEEP_LAG_MS = 60_000;
/** jobs read from the queue at once */
const PAGE = 500;
/** existence checks in flight at once: each one primary-key read, no transaction */
const READS_IN_FLIGHT = 16;

export interface ChargeSweepOptions {
  /** ms between passes after the first; 0: only the pass at start. Default CHARGE_SWEEP_MS */
  intervalMs?: number;
  /** default CHARGE_SWEEP_LAG_MS */
  lagMs?: number;
  clock?: () => number;
}

export interface ChargeSweepDeps {
  queue: Pick<JobQueue, 'completedJobs'>;
  store: Store;
  catalog: PublicEndpointCatalog;
  /** writes the charge unless its record exists; true when this call wrote it */
  write: (rec: BillingRecord) => Promise<boolean>;
  /** the charge of this job under way from its final record in this process, if any */
  inFlight: (jobId: string) => Promise<unknown> | undefined;
  onError: (err: unknown, what: string) => void;
  /** jobs a pass charged: their charge had not been written when they became final */
  onLate: (recs: BillingRecord[]) => void;
}

export interface ChargeSweepResult {
  /** jobs that owe a charge, looked at */
  checked: number;
  /** charges this pass wrote */
  charged: BillingRecord[];
  /** charges that could not be written (told to onError; the next pass tries again) */
  failed: number;
}

const ignore = (): void => undefined;

interface Owed {
  job: Job;
  rec: BillingRecord;
}

export class ChargeSweep {
  /** every job finished from here on is looked at by the next pass (0: every retained job) */
  private coveredFrom = 0;
  private timer: NodeJS.Timeout | undefined;
  /** the last pass asked for; never rejects (its caller is told) */
  private tail: Promise<void> = Promise.resolve();
  private busy = 0;
  private readonly intervalMs: number;
  private readonly lagMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly deps: ChargeSweepDeps,
    opts: ChargeSweepOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? CHARGE_SWEEP_MS;
    this.lagMs = opts.lagMs ?? CHARGE_SWEEP_LAG_MS;
    this.clock = opts.clock ?? Date.now;
  }

  /** the pass over every retained job now, then one every interval (nothing with a queue that cannot list its jobs) */
  start(): void {
    if (!this.deps.queue.completedJobs || this.timer) return;
    const tick = (): void => {
      if (this.busy === 0) void this.sweep().catch((e: unknown) => this.deps.onError(e, 'the sweep of public model charges'));
    };
    tick();
    if (this.intervalMs > 0) {
      this.timer = setInterval(tick, this.intervalMs);
      this.timer.unref();
    }
  }

  /** one pass, started once the pass under way (if any) has ended; rejects when the catalog or the queue could not be read */
  sweep(): Promise<ChargeSweepResult> {
    this.busy++;
    const next = this.tail.then(() => this.pass());
    this.tail = next.then(ignore, ignore).finally(() => this.busy--);
    return next;
  }

  /** no pass after this one; resolves once the pass under way has ended */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.tail;
  }

  private async pass(): Promise<ChargeSweepResult> {
    const startedAt = this.clock();
    const out: ChargeSweepResult = { checked: 0, charged: [], failed: 0 };
    for (const entry of await this.deps.catalog.entries()) await this.endpoint(entry, out);
    if (out.failed === 0) this.coveredFrom = Math.max(this.coveredFrom, startedAt - this.lagMs);
    if (out.charged.length > 0) this.deps.onLate(out.charged);
    return out;
  }

  private async endpoint(entry: PublicEndpointRecord, out: ChargeSweepResult): Promise<void> {
    let after = { finishedAt: this.coveredFrom, id: '' };
    for (;;) {
      const page = await this.deps.queue.completedJobs!(entry.endpointId, after, PAGE);
      const owed = page.flatMap((job): Owed[] => {
        const rec = chargeRecord(job, entry);
        return rec ? [{ job, rec }] : [];
      });
      out.checked += owed.length;
      for (const { job, rec } of await this.unwritten(owed)) {
        try {
          if (await this.deps.write(rec)) out.charged.push(rec);
        } catch (e) {
          out.failed++;
          this.deps.onError(e, `charge for job ${job.id}`);
        }
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last) return;
      after = { finishedAt: last.finishedAt ?? 0, id: last.id };
    }
  }

  /** those without a billing record, once the charges under way here for them have ended */
  private async unwritten(owed: Owed[]): Promise<Owed[]> {
    const missing: Owed[] = [];
    for (let i = 0; i < owed.length; i += READS_IN_FLIGHT) {
      const batch = owed.slice(i, i + READS_IN_FLIGHT);
      await Promise.all(batch.map((o) => this.deps.inFlight(o.job.id)));
      const found = await Promise.all(batch.map((o) => this.deps.store.get('billing', o.rec.id)));
      batch.forEach((o, k) => {
        if (!found[k]) missing.push(o);
      });
    }
    return missing;
  }
}
