// Rate limits shared by the replicas of one database (docs/rate-limits.md, "Several replicas"): the
// same windows, quotas and headers as the in-process RateLimiter, counted in PostgreSQL
// (the store's RateWindows, store/pg/replicas/pg-rate-windows.ts: one round trip per request, under the subject's row lock, windows on the
// database's clock). While the database cannot be reached the replica counts on its own (each
// replica then allows up to the full quota, as before replicas) rather than refuse every request;
// the store answers 503 for anything that needs it meanwhile.
import type { Logger } from 'pino';
import { sharedDatabase, type Services } from '../../core/index.ts';
import { isGpufleetError, WINDOWS, type Quotas } from '../../model/index.ts';
import { RateLimiter, type Charge, type ConsumeResult, type RequestLimiter, type WindowState } from './limiter.ts';

/** What the shared counter needs of the database (PgRateWindows). */
export interface SharedWindows {
  take(subject: string, seconds: readonly number[], quotas: readonly number[], units: number): Promise<{ now: number; starts: number[]; used: number[]; taken: boolean }>;
  refund(subject: string, starts: readonly number[], units: number): Promise<void>;
}

const SECONDS = WINDOWS.map((w) => w.seconds);

export class SharedRateLimiter implements RequestLimiter {
  /** counts while the database cannot be reached */
  private readonly local: RateLimiter;
  /** charges the local counters took (refunded there) */
  private readonly localCharges = new WeakSet<Charge>();
  private readonly quotaList: number[];
  private degraded = false;
  /**
   * Subjects this replica last saw with a window spent, until the first such window resets: their
   * requests are refused here without asking the database (a refused request changes nothing
   * there), so a caller hammering past its quota costs no round trip. Only a GraphQL refund made on
   * another replica meanwhile could have freed units, and it frees them at the next reset at the latest.
   */
  private readonly spent = new Map<string, { until: number; at: number; windows: WindowState[] }>();

  constructor(
    private readonly shared: SharedWindows,
    private readonly quotas: Quotas,
    private readonly log?: Pick<Logger, 'warn' | 'info'>,
    /** the database is known to be unreachable (the store's own watch): count locally without trying it */
    private readonly databaseDown: () => boolean = () => false,
  ) {
    this.local = new RateLimiter(quotas);
    this.quotaList = WINDOWS.map((w) => quotas[w.name]);
  }

  async consume(subject: string, nowMs = Date.now(), units = 1): Promise<ConsumeResult> {
    const refused = this.refusedHere(subject, nowMs, units);
    if (refused) return refused;
    let r: Awaited<ReturnType<SharedWindows['take']>>;
    try {
      // a database that does not answer at all would hold every request for the connect timeout
      if (this.databaseDown()) throw new Error('the database cannot be reached');
      r = await this.shared.take(subject, SECONDS, this.quotaList, units);
    } catch (e) {
      if (isGpufleetError(e)) throw e;
      if (!this.degraded) this.log?.warn({ err: e }, 'rate limits: the database cannot be reached; counting on this replica alone until it is back');
      this.degraded = true;
      const res = this.local.consume(subject, nowMs, units);
      if (res.charge) this.localCharges.add(res.charge);
      return res;
    }
    if (this.degraded) this.log?.info('rate limits: counting in the database again');
    this.degraded = false;
    const windows: WindowState[] = WINDOWS.map((w, i) => {
      const quota = this.quotas[w.name];
      const start = r.starts[i] ?? r.now;
      return { name: w.name, quota, seconds: w.seconds, remaining: quota - (r.used[i] ?? 0), reset: start + w.seconds - r.now };
    });
    const exceeded = r.taken ? [] : windows.filter((s) => s.remaining < units);
    for (const s of windows) s.remaining = Math.max(0, s.remaining);
    const spent = windows.filter((w) => w.remaining === 0);
    if (spent.length > 0) {
      if (this.spent.size > 10_000) for (const [k, v] of this.spent) if (v.until <= nowMs) this.spent.delete(k);
      this.spent.set(subject, { until: nowMs + Math.min(...spent.map((w) => w.reset)) * 1000, at: nowMs, windows: windows.map((w) => ({ ...w })) });
    } else this.spent.delete(subject);
    return { windows, exceeded, charge: r.taken ? { subject, units, starts: r.starts } : null };
  }

  private refusedHere(subject: string, nowMs: number, units: number): ConsumeResult | null {
    const s = this.spent.get(subject);
    if (!s || units === 0) return null;
    if (nowMs >= s.until) {
      this.spent.delete(subject);
      return null;
    }
    const elapsed = Math.floor((nowMs - s.at) / 1000);
    const windows = s.windows.map((w) => ({ ...w, reset: Math.max(0, w.reset - elapsed) }));
    const exceeded = windows.filter((w) => w.remaining < units);
    return exceeded.length > 0 ? { windows, exceeded, charge: null } : null;
  }

  async refund(charge: Charge): Promise<void> {
    this.spent.delete(charge.subject);
    if (this.localCharges.has(charge)) return this.local.refund(charge);
    // a refund that cannot reach the database is lost: the units stay counted until the window ends
    await this.shared.refund(charge.subject, charge.starts, charge.units).catch((err: unknown) => this.log?.warn({ err }, 'rate limits: a refund was lost'));
  }
}

/** The control plane's limiter: shared through the database when there is one, else this process's. */
export function requestLimiterFor(services: Pick<Services, 'store' | 'config'>, log?: Pick<Logger, 'warn' | 'info'>): RequestLimiter {
  const shared = sharedDatabase(services.store);
  if (!shared) return new RateLimiter(services.config.rateLimits);
  const store = services.store;
  return new SharedRateLimiter(shared.rateWindows(), services.config.rateLimits, log, () => (store.writeBlocker?.() ?? null) !== null);
}
