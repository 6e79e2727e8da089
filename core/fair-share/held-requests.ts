// Long-held requests per account (docs/security.md, "Stream shares"): requests that hold a
// connection open for as long as something may happen, not for the time it takes to answer. Each
// costs this process a socket and a subscription (an SSH channel for logs and exec), and the request
// rate limit counts each only once, when it arrives: one account could hold thousands. Per kind, an
// account may hold at most its limit at once in this replica; the next is 429 with Retry-After.
import { GpufleetError } from '../../model/index.ts';
import { holdOne, type Release } from './held-count.ts';

/**
 * events: `GET /v2/events` followed as server-sent events; waits: `runsync`, `status-sync` and
 * `stream` of the job interface, held until the job ends or the wait runs out; logs: pod and worker
 * log streams; exec: one-shot exec streams and interactive sessions.
 */
export const HELD_REQUEST_KINDS = ['events', 'waits', 'logs', 'exec'] as const;
export type HeldRequestKind = (typeof HELD_REQUEST_KINDS)[number];
export type HeldRequestLimits = Record<HeldRequestKind, number>;

export const DEFAULT_HELD_REQUEST_LIMITS: HeldRequestLimits = { events: 16, waits: 200, logs: 32, exec: 16 };

const RETRY_AFTER_S: HeldRequestLimits = { events: 10, waits: 1, logs: 10, exec: 10 };

const NAMES: Record<HeldRequestKind, string> = {
  events: 'event streams',
  waits: 'waiting job requests (runsync, status-sync, stream)',
  logs: 'log streams',
  exec: 'exec streams and sessions',
};

/**
 * GPUFLEET_HELD_REQUESTS: `kind=n,…` over the defaults, e.g. `events=4,waits=50`. Anything else
 * (an unknown kind, a number that is not a whole number from 1 on) is refused at start.
 */
export function parseHeldRequestLimits(value: string | undefined): HeldRequestLimits {
  const limits = { ...DEFAULT_HELD_REQUEST_LIMITS };
  if (!value?.trim()) return limits;
  for (const part of value.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*([1-9]\d{0,6})\s*$/.exec(part);
    if (!m || !(HELD_REQUEST_KINDS as readonly string[]).includes(m[1]!))
      throw new Error(`GPUFLEET_HELD_REQUESTS: "${part}" is not kind=n with kind one of ${HELD_REQUEST_KINDS.join(', ')} and n a whole number from 1`);
    limits[m[1] as HeldRequestKind] = Number(m[2]);
  }
  return limits;
}

export class HeldRequests {
  /** kind → account id → requests held */
  private readonly held = new Map<HeldRequestKind, Map<string, number>>(HELD_REQUEST_KINDS.map((k) => [k, new Map()]));

  constructor(readonly limits: HeldRequestLimits = DEFAULT_HELD_REQUEST_LIMITS) {}

  /** Takes one of the account's requests of this kind, or refuses (429) when it holds its limit. */
  acquire(accountId: string, kind: HeldRequestKind): Release {
    const byAccount = this.held.get(kind)!;
    const mine = byAccount.get(accountId) ?? 0;
    const limit = this.limits[kind];
    if (mine >= limit)
      throw new GpufleetError('HELD_REQUESTS', `This account already holds ${mine} ${NAMES[kind]} open, the most it may at once; close one, or try again later.`, {
        fields: { kind, held: mine, limit },
        headers: { 'retry-after': String(RETRY_AFTER_S[kind]) },
      });
    return holdOne(byAccount, accountId);
  }

  /** Requests of this kind the account holds now (tests). */
  heldBy(accountId: string, kind: HeldRequestKind): number {
    return this.held.get(kind)!.get(accountId) ?? 0;
  }
}
