// A public model job's charge as a billing record (docs/public-endpoints.md, "Charges"). It is made
// from the job (its id, caller, the `cost` job-output.ts wrote into its output, its finish time) and
// the catalog entry its endpoint backs, nothing else: the charge written when the job becomes final
// and one written later by the sweep (charge-sweep.ts) are the same record, under the same id.
import type { BillingRecord, PublicEndpointRecord } from '../../model/index.ts';
import type { Job } from '../../model/index.ts';

export const chargeId = (jobId: string) => `bill_pe_${jobId}`;

/** only a published model's output carries `cost` (job-output.ts writes it) */
export const hasCost = (output: unknown): boolean =>
  typeof output === 'object' && output !== null && typeof (output as { cost?: unknown }).cost === 'number';

/** the charge of a COMPLETED job of `entry`'s endpoint; none for the owner's own jobs or an output without a valid cost */
export function chargeRecord(job: Job, entry: PublicEndpointRecord): BillingRecord | undefined {
  if (job.status !== 'COMPLETED' || entry.accountId === job.accountId) return undefined;
  const out = typeof job.output === 'object' && job.output !== null ? (job.output as { cost?: unknown; usage?: { units?: unknown } }) : {};
  if (typeof out.cost !== 'number' || !Number.isFinite(out.cost) || out.cost < 0) return undefined;
  const at = new Date(job.finishedAt ?? Date.now()).toISOString();
  const units = typeof out.usage?.units === 'number' ? out.usage.units : undefined;
  return {
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
}
