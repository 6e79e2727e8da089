// Billing queries: the accrual records (billing.ts) cut into UTC calendar buckets per resource, in the
// public v2 shape `{records, metadata}`, and the account balance (credits minus accrued usage).
import { GpufleetError } from '../../model/index.ts';
import type { BillingRecord } from '../../model/index.ts';
import { billingQuerySchema, type BillingQueryInput, type BucketSize } from '../../model/index.ts';
import { check, compile } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { spendable } from './credit-holds.ts';
import type { Principal } from '../../model/index.ts';

const validateQuery = compile<BillingQueryInput>(billingQuerySchema);

export type BillingKind = BillingRecord['kind'];

export interface BillingQuery {
  kind: BillingKind;
  /** kinds listed together with `kind` (GET /v2/billing/endpoints: serverless and public model usage) */
  also?: BillingKind[];
  resourceId?: string;
  /** RFC 3339; default endTime − 30 days */
  startTime?: string;
  /** RFC 3339; default now */
  endTime?: string;
  bucketSize?: BucketSize;
}

export interface BillingAmounts {
  totalAmount: number;
  gpuAmount: number;
  cpuAmount: number;
  diskAmount: number;
}

export interface BillingBucket extends BillingAmounts {
  startTime: string;
  endTime: string;
  podId?: string;
  networkVolumeId?: string;
  endpointId?: string;
  /** public model usage: the model's slug (also its `endpointId`) */
  slug?: string;
}

export interface BillingReport {
  records: BillingBucket[];
  metadata: {
    query: { startTime: string; endTime: string; bucketSize: BucketSize; kind: BillingKind; also?: BillingKind[]; resourceId: string | null };
    recordCount: number;
    totals: BillingAmounts;
  };
}

const RESOURCE_FIELD = { pod: 'podId', networkVolume: 'networkVolumeId', endpoint: 'endpointId', 'public-endpoint': 'endpointId' } as const;
const DEFAULT_RANGE_MS = 30 * 24 * 3_600_000;
/** a year of hourly buckets is still one answer; beyond that ask for a coarser bucket */
const MAX_BUCKETS = 9000;
const MS_PER_HOUR = 3_600_000;

/** Start of the UTC bucket holding `t`; weeks start on Monday (ISO 8601). */
export function bucketStart(t: number, size: BucketSize): number {
  const d = new Date(t);
  switch (size) {
    case 'hour':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours());
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'week':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case 'year':
      return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

export function nextBucket(start: number, size: BucketSize): number {
  const d = new Date(start);
  switch (size) {
    case 'hour':
      return start + MS_PER_HOUR;
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    case 'week':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7);
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    case 'year':
      return Date.UTC(d.getUTCFullYear() + 1, 0, 1);
  }
}

/** REST query parameters → BillingQuery. `serverlessId` is the v2 name of `endpointId`. */
export function billingQueryFromParams(kind: BillingKind, params: unknown): BillingQuery {
  const p = check(validateQuery, params ?? {}, 'billing query');
  const q: BillingQuery = { kind };
  const resourceId = kind === 'pod' ? p.podId : kind === 'networkVolume' ? p.networkVolumeId : (p.endpointId ?? p.serverlessId);
  const filters: (keyof BillingQueryInput)[] = kind === 'endpoint' || kind === 'public-endpoint' ? ['endpointId', 'serverlessId'] : [RESOURCE_FIELD[kind]];
  const wrong = (['podId', 'networkVolumeId', 'endpointId', 'serverlessId'] as const).filter((f) => p[f] !== undefined && !filters.includes(f));
  if (wrong.length)
    throw new GpufleetError('VALIDATION_FAILED', `This billing route does not filter by ${wrong.join(', ')}.`, {
      errors: wrong.map((w) => `$.${w}: not a filter of this route`),
    });
  if (resourceId !== undefined) q.resourceId = resourceId;
  if (p.startTime !== undefined) q.startTime = p.startTime;
  if (p.endTime !== undefined) q.endTime = p.endTime;
  if (p.bucketSize !== undefined) q.bucketSize = p.bucketSize;
  return q;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const zero = (): BillingAmounts => ({ totalAmount: 0, gpuAmount: 0, cpuAmount: 0, diskAmount: 0 });

export class BillingService {
  constructor(private readonly store: Store) {}

  /**
   * Usage of the caller's resources of one kind, per bucket and resource. Records of other accounts
   * are never read, so another account's resource id simply yields no records.
   */
  async records(principal: Principal, q: BillingQuery, now = Date.now()): Promise<BillingReport> {
    const size = q.bucketSize ?? 'day';
    const end = q.endTime !== undefined ? Date.parse(q.endTime) : now;
    const start = q.startTime !== undefined ? Date.parse(q.startTime) : end - DEFAULT_RANGE_MS;
    if (!(start < end))
      throw new GpufleetError('BAD_REQUEST', 'startTime must be before endTime.', { errors: ['$.startTime: must be before endTime'] });
    let n = 0;
    for (let b = bucketStart(start, size); b < end; b = nextBucket(b, size))
      if (++n > MAX_BUCKETS)
        throw new GpufleetError('BAD_REQUEST', `The range holds more than ${MAX_BUCKETS} ${size} buckets; use a larger bucketSize or a shorter range.`, {
          errors: ['$.bucketSize: too many buckets for this range'],
        });

    const buckets = new Map<string, BillingBucket>();
    const totals = zero();
    // one-off charges (public models) are summed in integer micro-dollars, so their totals are exact
    const micros = new Map<string, number>();
    let totalMicros = 0;
    const records: BillingRecord[] = [];
    for (const kind of [q.kind, ...(q.also ?? [])])
      records.push(...(await this.store.list('billing', { accountId: principal.accountId, kind, ...(q.resourceId !== undefined ? { resourceId: q.resourceId } : {}) })));
    for (const rec of records) {
      if (rec.amountMicros !== undefined) {
        const at = Date.parse(rec.startedAt);
        if (at < start || at >= end) continue;
        const b = bucketStart(at, size);
        const key = `${b}|${rec.resourceId}`;
        if (!buckets.has(key))
          buckets.set(key, { startTime: new Date(b).toISOString(), endTime: new Date(nextBucket(b, size)).toISOString(), ...zero(), endpointId: rec.resourceId, slug: rec.resourceId });
        micros.set(key, (micros.get(key) ?? 0) + rec.amountMicros);
        totalMicros += rec.amountMicros;
        continue;
      }
      const s = Math.max(Date.parse(rec.startedAt), start);
      const e = Math.min(rec.endedAt ? Date.parse(rec.endedAt) : now, end);
      for (let b = bucketStart(s, size); b < e; b = nextBucket(b, size)) {
        const bEnd = nextBucket(b, size);
        const hours = (Math.min(e, bEnd) - Math.max(s, b)) / MS_PER_HOUR;
        if (hours <= 0) continue;
        const key = `${b}|${rec.resourceId}`;
        let bucket = buckets.get(key);
        if (!bucket) {
          bucket = { startTime: new Date(b).toISOString(), endTime: new Date(bEnd).toISOString(), ...zero(), [RESOURCE_FIELD[q.kind]]: rec.resourceId };
          buckets.set(key, bucket);
        }
        for (const [field, rate] of [['totalAmount', rec.rate], ['gpuAmount', rec.gpuRate], ['cpuAmount', rec.cpuRate], ['diskAmount', rec.diskRate]] as const) {
          bucket[field] += rate * hours;
          totals[field] += rate * hours;
        }
      }
    }
    const rows = [...buckets.entries()]
      .map(([key, b]) => ({ ...b, totalAmount: round(b.totalAmount + (micros.get(key) ?? 0) / 1e6), gpuAmount: round(b.gpuAmount), cpuAmount: round(b.cpuAmount), diskAmount: round(b.diskAmount) }))
      .sort((a, b) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : resourceOf(a) < resourceOf(b) ? -1 : 1));
    return {
      records: rows,
      metadata: {
        query: { startTime: new Date(start).toISOString(), endTime: new Date(end).toISOString(), bucketSize: size, kind: q.kind, ...(q.also?.length ? { also: q.also } : {}), resourceId: q.resourceId ?? null },
        recordCount: rows.length,
        totals: { totalAmount: round(totals.totalAmount + totalMicros / 1e6), gpuAmount: round(totals.gpuAmount), cpuAmount: round(totals.cpuAmount), diskAmount: round(totals.diskAmount) },
      },
    };
  }

  /**
   * Credits minus everything accrued so far (pods, volumes, endpoints) and minus the open holds of
   * accepted public model jobs (credit-holds.ts); the same figure GET /v2/account shows.
   */
  async balance(principal: Principal, now = Date.now()): Promise<{ balance: number; usage: number; held: number; clientBalance: number }> {
    const s = await spendable(this.store, principal.accountId, now);
    return { balance: s.balance, usage: round(s.usage), held: round(s.held), clientBalance: round(s.left) };
  }
}

const resourceOf = (b: BillingBucket) => b.podId ?? b.networkVolumeId ?? b.endpointId ?? '';
