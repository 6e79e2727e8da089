// Billing accrues while a resource holds compute: a record opens when a pod starts holding compute
// and closes when it stops. A pod being moved off a failed, drained or lost host holds compute
// without being billed until it runs again (model/records/pod-move.ts, docs/gpu-health.md "Acting on it"). Balances are credits minus accrued usage, computed when read.
import { billable } from '../../model/index.ts';
import type { PodRecord } from '../../model/index.ts';
import type { BillingRecord, NetworkVolumeRecord } from '../../model/index.ts';
import type { StoreReader, StoreTx } from '../../store/index.ts';
import { newId } from '../accounts/index.ts';

/**
 * Keeps billing in step with a pod write: call with the stored pod (or null) and its next version.
 * A serverless worker's time is the endpoint's: `kind: endpoint`, keyed by the endpoint, with the
 * worker's id in `podId` (docs/billing.md).
 */
export async function accruePod(tx: StoreTx, before: PodRecord | null, after: PodRecord, now: string): Promise<void> {
  const was = before !== null && billable(before);
  const is = billable(after);
  const endpointId = after.endpointId;
  if (was && (!is || before.costPerHr !== after.costPerHr)) {
    const open = endpointId
      ? (await tx.list('billing', { accountId: after.accountId, resourceId: endpointId, endedAt: null })).filter((r) => r.podId === after.id)
      : await tx.list('billing', { accountId: after.accountId, resourceId: after.id, endedAt: null });
    // a record closed at a moment before it began (a move's failure time, pod-mover.ts) ends where it began
    for (const rec of open) tx.put('billing', { ...rec, endedAt: now < rec.startedAt ? rec.startedAt : now });
  }
  if (is && (!was || before.costPerHr !== after.costPerHr)) {
    const rec: BillingRecord = {
      id: newId('bill_'),
      accountId: after.accountId,
      kind: endpointId ? 'endpoint' : 'pod',
      resourceId: endpointId ?? after.id,
      ...(endpointId ? { podId: after.id } : {}),
      gpuTypeId: after.gpu?.id ?? null,
      rate: after.costPerHr,
      gpuRate: after.gpu ? after.costPerHr : 0,
      cpuRate: after.cpu ? after.costPerHr : 0,
      diskRate: 0,
      startedAt: now,
      endedAt: null,
    };
    tx.put('billing', rec);
  }
}

/** USD per GB-month of network volume storage (docs/billing.md); a month is 730 hours, as on the public platform. */
export const VOLUME_PRICE_PER_GB_MONTH = 0.07;
export const HOURS_PER_MONTH = 730;

export function volumeRatePerHour(sizeGb: number): number {
  return (sizeGb * VOLUME_PRICE_PER_GB_MONTH) / HOURS_PER_MONTH;
}

/**
 * Keeps storage billing in step with a network volume write: a record is open while the volume
 * exists; a resize closes it and opens one at the new rate; delete (`after` null) closes it.
 */
export async function accrueNetworkVolume(
  tx: StoreTx,
  before: NetworkVolumeRecord | null,
  after: NetworkVolumeRecord | null,
  now: string,
): Promise<void> {
  const vol = after ?? before;
  if (!vol || (before && after && before.size === after.size)) return;
  if (before)
    for (const open of await tx.list('billing', { accountId: vol.accountId, resourceId: vol.id, endedAt: null }))
      tx.put('billing', { ...open, endedAt: now });
  if (after) {
    const rate = volumeRatePerHour(after.size);
    tx.put('billing', {
      id: newId('bill_'),
      accountId: after.accountId,
      kind: 'networkVolume',
      resourceId: after.id,
      gpuTypeId: null,
      rate,
      gpuRate: 0,
      cpuRate: 0,
      diskRate: rate,
      startedAt: now,
      endedAt: null,
    });
  }
}

/** USD accrued by one record between `from` and `to` (ms), open records counting up to `now`. */
export function accrued(rec: BillingRecord, from: number, to: number, now = Date.now()): number {
  // a one-off charge (public-endpoint) counts whole at its moment
  if (rec.amountMicros !== undefined) {
    const at = Date.parse(rec.startedAt);
    return at >= from && at < to && at <= now ? rec.amountMicros / 1e6 : 0;
  }
  const start = Math.max(Date.parse(rec.startedAt), from);
  const end = Math.min(rec.endedAt ? Date.parse(rec.endedAt) : now, to);
  return end > start ? (rec.rate * (end - start)) / 3_600_000 : 0;
}

export async function accountUsage(store: StoreReader, accountId: string, now = Date.now()): Promise<number> {
  let total = 0;
  for (const rec of await store.list('billing', { accountId })) total += accrued(rec, 0, now, now);
  return total;
}
