// Single-use exec tickets (docs/pods.md, "Interactive exec"): browsers cannot set headers on a
// WebSocket, so a client with a key first asks `POST /v2/pods/{id}/exec/ticket` for a ticket, then
// opens `GET /v2/pods/{id}/exec/ws?ticket=…`. A ticket is good once, for that pod only, for 30 s,
// and acts as the key that asked for it. Kept hashed, in memory (a restart forgets them: they live
// seconds), at most a few per account. A ticket dies with its key: redeeming reads the key's record
// from the store, so a revocation (or expiry) made on any replica refuses the ticket at once.
import { createHash, randomBytes } from 'node:crypto';
import { GpufleetError } from '../../../model/index.ts';
import type { StoreReader } from '../../../store/index.ts';
import { keyRefusal } from '../../accounts/index.ts';
import type { Principal } from '../../../model/index.ts';

export const EXEC_TICKET_TTL_MS = 30_000;
/** tickets not yet used per account; asking for more is 429 until some are used or expire */
export const EXEC_TICKETS_PER_ACCOUNT = 20;
const TICKET = /^gfx_[A-Za-z0-9_-]{43}$/;

interface Held {
  principal: Principal;
  podId: string;
  expires: number;
}

const hash = (t: string) => createHash('sha256').update(t).digest('hex');

export class ExecTickets {
  private readonly held = new Map<string, Held>();

  constructor(
    /** where the key that asked for a ticket is read again when the ticket is used */
    private readonly keys: Pick<StoreReader, 'get'>,
    private readonly ttlMs = EXEC_TICKET_TTL_MS,
  ) {}

  issue(principal: Principal, podId: string, now = Date.now()): { ticket: string; expiresAt: string } {
    this.sweep(now);
    let mine = 0;
    for (const h of this.held.values()) if (h.principal.accountId === principal.accountId) mine++;
    if (mine >= EXEC_TICKETS_PER_ACCOUNT)
      throw new GpufleetError('RATE_LIMITED', `This account holds ${mine} unused exec tickets, the most it may; use them or wait ${this.ttlMs / 1000} s.`, {
        headers: { 'retry-after': String(Math.ceil(this.ttlMs / 1000)) },
      });
    const ticket = `gfx_${randomBytes(32).toString('base64url')}`;
    this.held.set(hash(ticket), { principal, podId, expires: now + this.ttlMs });
    return { ticket, expiresAt: new Date(now + this.ttlMs).toISOString() };
  }

  /**
   * The key's principal, once: the ticket is gone afterwards, whatever the answer. Null when not good
   * for this pod now, or its key is revoked, expired or gone.
   */
  async redeem(ticket: string, podId: unknown, now = Date.now()): Promise<Principal | null> {
    if (!TICKET.test(ticket)) return null;
    const key = hash(ticket);
    const h = this.held.get(key);
    if (!h) return null;
    this.held.delete(key);
    if (h.expires <= now || h.podId !== podId) return null;
    const rec = await this.keys.get('apiKeys', h.principal.keyId);
    return rec && rec.accountId === h.principal.accountId && keyRefusal(rec, Date.now()) === null ? h.principal : null;
  }

  private sweep(now: number): void {
    for (const [k, h] of this.held) if (h.expires <= now) this.held.delete(k);
  }
}
