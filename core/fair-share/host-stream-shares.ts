// Each account's share of a host's streams (docs/security.md, "Stream shares"). A stream is a log
// follow, a one-shot exec or an interactive exec session: each holds a channel on the host's stream
// connection for as long as a client watches, and a host serves at most `perHost` at once (the SSH
// pool refuses the next with 503, fleet/ssh-pool.ts). Without a share, one account opening that many
// took the host from every other account. Here an account may hold at most ceil(perHost / 2) of a
// host's streams: the rest stay for the others, and its next one is 429 with Retry-After. Counted in
// this process, as the pool's own cap is: with replicas, each replica has its own stream connection
// to each host and its own count (docs/security.md, "Stream shares").
import { GpufleetError } from '../../model/index.ts';
import { holdOne, type Release } from './held-count.ts';

/** the SSH pool's default streams per host (SshPoolOptions.maxStreamsPerHost) */
export const DEFAULT_STREAMS_PER_HOST = 8;
/** seconds a refused client is told to wait: streams are held for as long as someone watches */
const RETRY_AFTER_S = 10;

export class HostStreamShares {
  /** host id → account id → streams held */
  private readonly held = new Map<string, Map<string, number>>();
  readonly perAccount: number;

  constructor(readonly perHost = DEFAULT_STREAMS_PER_HOST) {
    this.perAccount = Math.max(1, Math.ceil(perHost / 2));
  }

  /** Refuses (429) when the account already holds its share of the host's streams; takes nothing. */
  check(accountId: string, hostId: string): void {
    const mine = this.held.get(hostId)?.get(accountId) ?? 0;
    if (mine >= this.perAccount)
      throw new GpufleetError(
        'HOST_STREAM_SHARE',
        `This account already holds ${mine} streams (logs, exec) on host ${hostId}, its share of the ${this.perHost} the host serves at once; ` +
          'close one, or try again later.',
        { fields: { hostId, held: mine, share: this.perAccount, hostStreams: this.perHost }, headers: { 'retry-after': String(RETRY_AFTER_S) } },
      );
  }

  /** Takes one of the account's share of the host's streams, or refuses (429). */
  acquire(accountId: string, hostId: string): Release {
    this.check(accountId, hostId);
    const byAccount = this.held.get(hostId) ?? this.held.set(hostId, new Map()).get(hostId)!;
    return holdOne(byAccount, accountId, () => {
      if (this.held.get(hostId) === byAccount) this.held.delete(hostId);
    });
  }

  /** Streams the account holds on the host now (tests, metrics). */
  heldBy(accountId: string, hostId: string): number {
    return this.held.get(hostId)?.get(accountId) ?? 0;
  }
}
