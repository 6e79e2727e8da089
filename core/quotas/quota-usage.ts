// What an account uses now, in the units of its limits (docs/teams.md, "Quotas"): GPUs held by placed
// pods and workers (on-demand in total and per type, interruptible apart), pods placed, serverless
// workers in service, network volume GB, USD per hour of every open billing record, and USD accrued in
// the calendar month (UTC). Read inside the transaction that admits new work, so on both stores what
// it counts is what the commit sees (serialisable transactions: docs/placement.md, "Quotas").
import { isInterruptible, type PodRecord } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import { accrued } from '../billing/index.ts';

export interface QuotaUsage {
  gpus: number;
  gpusByType: Record<string, number>;
  interruptibleGpus: number;
  pods: number;
  workers: number;
  volumeGb: number;
  /** USD/h of what accrues now */
  spendPerHour: number;
  /** USD accrued since the start of the calendar month (UTC) */
  monthSpend: number;
  /** the calendar month (UTC), YYYY-MM */
  month: string;
}


/** A worker that has not been retired (it holds, or is about to hold, its GPUs). */
const workerInService = (p: PodRecord): boolean => p.endpointId !== undefined && p.status !== 'TERMINATED';

/** ms since the epoch of the start of the calendar month (UTC) that `now` falls in */
export function monthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export const monthOf = (now: number): string => new Date(now).toISOString().slice(0, 7);

const round = (n: number, places = 6) => Math.round(n * 10 ** places) / 10 ** places;

/** `without`: a pod left out of the count (its own use is free to the demand that replaces or resizes it) */
export async function quotaUsage(store: StoreReader, accountId: string, now: number, without?: string): Promise<QuotaUsage> {
  const u: QuotaUsage = { gpus: 0, gpusByType: {}, interruptibleGpus: 0, pods: 0, workers: 0, volumeGb: 0, spendPerHour: 0, monthSpend: 0, month: monthOf(now) };
  // one read after another: inside a PostgreSQL transaction the reads share one connection
  for (const p of await store.list('pods', { accountId })) {
    if (p.id === without) continue;
    if (workerInService(p)) u.workers += 1;
    if (!p.allocated) continue;
    if (p.endpointId === undefined) u.pods += 1;
    if (!p.gpu) continue;
    if (isInterruptible(p)) u.interruptibleGpus += p.gpu.count;
    else {
      u.gpus += p.gpu.count;
      u.gpusByType[p.gpu.id] = (u.gpusByType[p.gpu.id] ?? 0) + p.gpu.count;
    }
  }
  for (const v of await store.list('networkVolumes', { accountId })) u.volumeGb += v.size;
  const from = monthStart(now);
  for (const rec of await store.list('billing', { accountId })) {
    if (rec.endedAt === null && rec.amountMicros === undefined && (without === undefined || (rec.resourceId !== without && rec.podId !== without))) u.spendPerHour += rec.rate;
    if (rec.endedAt === null || Date.parse(rec.endedAt) > from) u.monthSpend += accrued(rec, from, now, now);
  }
  u.spendPerHour = round(u.spendPerHour, 4);
  u.monthSpend = round(u.monthSpend);
  return u;
}
