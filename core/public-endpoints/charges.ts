// Charging public model jobs (docs/public-endpoints.md, "Charges"): a COMPLETED job of an endpoint
// that backs a slug costs its caller the `cost` its output reports (written by job-output.ts), as one
// `public-endpoint` billing record in integer micro-dollars. The record's id comes from the job's, so
// a job is charged at most once. The owner's own jobs are not charged.
import type { BillingRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { AccountCredits } from '../credits.ts';
import type { Job, JobQueue } from '../jobs/index.ts';
import type { PublicEndpointCatalog } from './catalog.ts';

export interface PublicEndpointChargesOptions {
  /** a charge that could not be written (logged; the job stays COMPLETED) */
  onError?: (err: unknown, what: string) => void;
  /** called after each charge is durable (tests, metrics) */
  onCharged?: (rec: BillingRecord) => void;
}

export const chargeId = (jobId: string) => `bill_pe_${jobId}`;

const hasCost = (output: unknown): boolean =>
  typeof output === 'object' && output !== null && typeof (output as { cost?: unknown }).cost === 'number';

export class PublicEndpointCharges {
  private readonly unsubscribe: () => void;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    queue: JobQueue,
    private readonly store: Store,
    private readonly catalog: PublicEndpointCatalog,
    private readonly credits: AccountCredits,
    private readonly opts: PublicEndpointChargesOptions = {},
  ) {
    this.unsubscribe = queue.onFinal((job) => {
      // only a published model's output carries `cost` (job-output.ts writes it): every other job
      // ends here without a catalog read
      if (job.status !== 'COMPLETED' || !hasCost(job.output)) return;
      const p: Promise<void> = this.charge(job)
        .then(() => undefined)
        .catch((e: unknown) => this.opts.onError?.(e, `charge for job ${job.id}`))
        .finally(() => this.pending.delete(p));
      this.pending.add(p);
    });
  }

  /** charges the job's caller; nothing when the job's endpoint backs no slug, or the caller owns it */
  async charge(job: Job): Promise<BillingRecord | undefined> {
    const entry = await this.catalog.forEndpoint(job.endpointId);
    if (!entry || entry.accountId === job.accountId) return undefined;
    const out = typeof job.output === 'object' && job.output !== null ? (job.output as { cost?: unknown; usage?: { units?: unknown } }) : {};
    if (typeof out.cost !== 'number' || !Number.isFinite(out.cost) || out.cost < 0) return undefined;
    const at = new Date(job.finishedAt ?? Date.now()).toISOString();
    const units = typeof out.usage?.units === 'number' ? out.usage.units : undefined;
    const rec: BillingRecord = {
      id: chargeId(job.id),
      accountId: job.accountId,
      kind: 'public-endpoint',
      resourceId: entry.id,
      jobId: job.id,
      ...(units !== undefined ? { units } : {}),
      amountMicros: Math.round(out.cost * 1e6),
      gpuTypeId: null,
      rate: 0,
      gpuRate: 0,
      cpuRate: 0,
      diskRate: 0,
      startedAt: at,
      endedAt: at,
    };
    const written = await this.store.transact(async (tx) => {
      if (await tx.get('billing', rec.id)) return false;
      tx.put('billing', rec);
      return true;
    });
    this.credits.forget(job.accountId);
    if (written) this.opts.onCharged?.(rec);
    return written ? rec : undefined;
  }

  /** stops listening; resolves once the charges under way are written */
  async close(): Promise<void> {
    this.unsubscribe();
    await Promise.all([...this.pending]);
  }
}
