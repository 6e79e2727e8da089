// Credit holds (docs/security.md, "Credits are reserved, not only checked"): a public model job's
// most possible cost is set aside when the job is accepted, in the same transaction that checks the
// account's balance, so concurrent submissions (on one replica or several) cannot all pass one check.
// A hold ends when its job's charge is written (settled: the charge replaces it, in one transaction)
// or the job ends without a charge (released: cancelled, failed, timed out, expired, never enqueued).
// Holds whose job is gone are released by the sweep (core/public-models/hold-sweep.ts).
import { randomUUID } from 'node:crypto';
import type { CreditHoldRecord, PublicEndpointRecord } from '../../model/index.ts';
import type { StoreReader, StoreTx } from '../../store/index.ts';
import { accountUsage } from './billing.ts';

/** Integer micro-dollars of `units` at `usdPerUnit`, rounded half up (float noise removed first). */
export function costMicros(units: number, usdPerUnit: number): number {
  return Math.round(Number((units * usdPerUnit * 1e6).toPrecision(12)));
}

/** the most units one job of the entry is charged; undefined for an entry published before holds (no cap) */
export function maxUnitsPerJob(entry: PublicEndpointRecord): number | undefined {
  return entry.pricing.maxUnitsPerJob ?? (entry.pricing.unit === 'request' ? 1 : undefined);
}

/** what one job of the entry holds, in micro-dollars; undefined when the entry has no cap (checked, not held) */
export function holdMicros(entry: PublicEndpointRecord): number | undefined {
  const max = maxUnitsPerJob(entry);
  return max === undefined ? undefined : costMicros(max, entry.pricing.usdPerUnit);
}

export function newHold(accountId: string, entry: PublicEndpointRecord, amountMicros: number, jobId: string | null, now: string): CreditHoldRecord {
  return { id: `hold_${randomUUID()}`, accountId, resourceId: entry.id, endpointId: entry.endpointId, jobId, amountMicros, createdAt: now };
}

/** micro-dollars the account's open holds set aside */
export async function heldMicros(store: StoreReader, accountId: string): Promise<number> {
  let total = 0;
  for (const h of await store.list('creditHolds', { accountId })) total += h.amountMicros;
  return total;
}

/** USD the account may still spend: credits, less usage so far, less open holds */
export async function spendable(store: StoreReader, accountId: string, now: number): Promise<{ balance: number; usage: number; held: number; left: number }> {
  // one after another: inside a PostgreSQL transaction the reads share one connection
  const account = await store.get('accounts', accountId);
  const usage = await accountUsage(store, accountId, now);
  const held = await heldMicros(store, accountId);
  const balance = account?.balance ?? 0;
  return { balance, usage, held: held / 1e6, left: balance - usage - held / 1e6 };
}

/** ends the holds of a job (its charge was written in `tx`, or it ended without one); how many */
export async function endHoldsOf(tx: StoreTx, jobId: string): Promise<number> {
  const holds = await tx.list('creditHolds', { jobId });
  for (const h of holds) tx.delete('creditHolds', h.id);
  return holds.length;
}
