// Credit holds whose job is gone (docs/security.md, "Credits are reserved, not only checked"): the
// control plane stopped between a hold and its job's enqueue, or between a job's end and the end of
// its hold, or the release's write failed. A hold older than the grace (a submission under way has
// not attached its job yet) ends here when its job is unknown, expired or final: a COMPLETED job of
// a model is charged (the charge's write ends the hold, as on the hot path), any other is released.
// Holds of queued and running jobs stay. Every replica may sweep: each end is its own transaction
// and ending a hold twice changes nothing.
import type { BillingRecord, CreditHoldRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { endHoldsOf } from '../billing/index.ts';
import { type JobQueue } from '../jobs/index.ts';
import type { PublicEndpointCatalog } from './catalog.ts';
import { chargeRecord } from './charge-record.ts';
import { isFinal } from '../../model/index.ts';

/** how old a hold must be before the sweep looks at it: a submission attaches its job well before */
export const HOLD_GRACE_MS = 60_000;

export interface HoldSweepDeps {
  queue: Pick<JobQueue, 'get'>;
  store: Store;
  catalog: PublicEndpointCatalog;
  /** writes the charge (ending the job's hold) unless its record exists */
  write: (rec: BillingRecord) => Promise<boolean>;
  /** the account's cached balance is stale */
  forget: (accountId: string) => void;
  clock: () => number;
  graceMs?: number;
}

export interface HoldSweepResult {
  /** holds ended without a charge */
  released: number;
  /** holds ended by their job's charge */
  settled: number;
}

export async function sweepHolds(deps: HoldSweepDeps): Promise<HoldSweepResult> {
  const out: HoldSweepResult = { released: 0, settled: 0 };
  const before = deps.clock() - (deps.graceMs ?? HOLD_GRACE_MS);
  for (const hold of await deps.store.list('creditHolds')) {
    if (Date.parse(hold.createdAt) > before) continue;
    const ended = await end(deps, hold);
    if (ended) out[ended]++;
  }
  return out;
}

async function end(deps: HoldSweepDeps, hold: CreditHoldRecord): Promise<'released' | 'settled' | undefined> {
  const job = hold.jobId === null ? undefined : await deps.queue.get(hold.jobId);
  if (job && !isFinal(job.status)) return undefined;
  const entry = job && (await deps.catalog.forEndpoint(job.endpointId));
  const rec = job && entry && chargeRecord(job, entry);
  if (rec) {
    await deps.write(rec);
    return 'settled';
  }
  await deps.store.transact(async (tx) => {
    if (hold.jobId !== null) await endHoldsOf(tx, hold.jobId);
    else if (await tx.get('creditHolds', hold.id)) tx.delete('creditHolds', hold.id);
  });
  deps.forget(hold.accountId);
  return 'released';
}
