// Image pulls beside the reconcile pass (docs/provisioner.md "Image pulls"): per host at most
// `perHost` at once, and a fair share per account: an account holds at most `perAccount` of the
// host's slots (fewer than all of them, so another tenant's pull always finds one), and a freed slot
// goes to the account served least recently (round robin). Pulls of the same key (image, and whose
// credentials) on a host coalesce into one. A pull that shows no progress for `stallMs` is cancelled
// as stalled. Nothing here waits for a pull: the pass asks and moves on; listeners hear the end.
import type { PullSummary } from './pull-progress.ts';
import type { RunningPull } from './image-pull.ts';

export interface PullSettings {
  /** pulls at once per host */
  perHost: number;
  /** of those, at most this many for one account (capped at perHost - 1 when perHost > 1) */
  perAccount: number;
  /** no progress for this long: the pull is cancelled as stalled */
  stallMs: number;
}

export const DEFAULT_PULL_SETTINGS: PullSettings = { perHost: 3, perAccount: 2, stallMs: 60_000 };

export type PullEnd =
  | { kind: 'pulled'; imageId: string }
  /** docker said no (its words in `output`, for the operator's log only) */
  | { kind: 'failed'; output: string }
  | { kind: 'stalled'; output: string }
  /** never started, or cut off without docker's answer (host gone, lease lost): the pass asks again */
  | { kind: 'interrupted'; cause: unknown }
  /** every listener went away (pod stopped, terminated, moved) */
  | { kind: 'cancelled' };

export interface PullJob {
  hostId: string;
  /** pulls with the same key on a host are one */
  key: string;
  /** the account charged with the slot (the first to ask) */
  accountId: string;
  /** starts the pull on the host; `moved` on each sign of progress */
  start(moved: () => void): Promise<RunningPull>;
}

interface Entry {
  job: PullJob;
  listeners: Map<string, (end: PullEnd) => void>;
  seq: number;
  state: 'queued' | 'running';
  pull: RunningPull | null;
  lastMoved: number;
  stalled: boolean;
  cancelled: boolean;
}

interface HostPulls {
  jobs: Map<string, Entry>;
  /** account → when it last got a slot (the round robin) */
  served: Map<string, number>;
}

export class PullScheduler {
  private readonly hosts = new Map<string, HostPulls>();
  private seq = 0;

  constructor(
    readonly settings: PullSettings,
    /** asked during a pull: false once this replica no longer holds the host (the pull is cancelled) */
    private readonly stillHeld: (hostId: string) => boolean = () => true,
  ) {}

  /** Queues the pull, or joins the one of the same key; `listenerId` can later drop out (drop()). */
  submit(job: PullJob, listenerId: string, onEnd: (end: PullEnd) => void): void {
    const h = this.host(job.hostId);
    const e = h.jobs.get(job.key);
    if (e) {
      e.listeners.set(listenerId, onEnd);
      return;
    }
    h.jobs.set(job.key, { job, listeners: new Map([[listenerId, onEnd]]), seq: ++this.seq, state: 'queued', pull: null, lastMoved: 0, stalled: false, cancelled: false });
    this.dispatch(job.hostId);
  }

  /** 'queued', 'running', or null when no pull of that key is on the host. */
  state(hostId: string, key: string): 'queued' | 'running' | null {
    return this.hosts.get(hostId)?.jobs.get(key)?.state ?? null;
  }

  summary(hostId: string, key: string): PullSummary | null {
    return this.hosts.get(hostId)?.jobs.get(key)?.pull?.summary() ?? null;
  }

  /** The listener no longer waits; a pull nobody waits for is cancelled. */
  drop(hostId: string, key: string, listenerId: string): void {
    const h = this.hosts.get(hostId);
    const e = h?.jobs.get(key);
    if (!h || !e || !e.listeners.delete(listenerId) || e.listeners.size > 0) return;
    e.cancelled = true;
    if (e.state === 'queued') this.end(hostId, e, { kind: 'cancelled' });
    else e.pull?.cancel();
  }

  /** Cancels every pull (the provisioner stops); resolves once the running ones have ended on their hosts. */
  async stopAll(): Promise<void> {
    const ending: Promise<unknown>[] = [];
    for (const [hostId, h] of this.hosts) {
      for (const e of [...h.jobs.values()]) {
        e.cancelled = true;
        if (e.state === 'queued') this.end(hostId, e, { kind: 'cancelled' });
        else if (e.pull) {
          e.pull.cancel();
          ending.push(e.pull.done);
        }
      }
    }
    await Promise.allSettled(ending);
  }

  private host(hostId: string): HostPulls {
    let h = this.hosts.get(hostId);
    if (!h) this.hosts.set(hostId, (h = { jobs: new Map(), served: new Map() }));
    return h;
  }

  private dispatch(hostId: string): void {
    const h = this.hosts.get(hostId);
    if (!h) return;
    for (;;) {
      const running = [...h.jobs.values()].filter((e) => e.state === 'running').length;
      if (running >= this.settings.perHost) return;
      const next = this.pick(h);
      if (!next) return;
      h.served.set(next.job.accountId, ++this.seq);
      void this.run(hostId, next);
    }
  }

  /** The oldest queued pull of the account served least recently among those under their share. */
  private pick(h: HostPulls): Entry | undefined {
    const { perHost, perAccount } = this.settings;
    const share = perHost > 1 ? Math.max(1, Math.min(perAccount, perHost - 1)) : 1;
    const busy = new Map<string, number>();
    for (const e of h.jobs.values()) if (e.state === 'running') busy.set(e.job.accountId, (busy.get(e.job.accountId) ?? 0) + 1);
    let best: Entry | undefined;
    const rank = (e: Entry) => [h.served.get(e.job.accountId) ?? 0, e.seq] as const;
    for (const e of h.jobs.values()) {
      if (e.state !== 'queued' || (busy.get(e.job.accountId) ?? 0) >= share) continue;
      if (!best) best = e;
      else {
        const [a, b] = [rank(e), rank(best)];
        if (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])) best = e;
      }
    }
    return best;
  }

  private async run(hostId: string, e: Entry): Promise<void> {
    e.state = 'running';
    e.lastMoved = performance.now();
    let pull: RunningPull;
    try {
      pull = await e.job.start(() => void (e.lastMoved = performance.now()));
    } catch (cause) {
      this.end(hostId, e, e.cancelled ? { kind: 'cancelled' } : { kind: 'interrupted', cause });
      return;
    }
    e.pull = pull;
    if (e.cancelled) pull.cancel();
    const { stallMs } = this.settings;
    const watch = setInterval(() => {
      if (!this.stillHeld(hostId)) {
        e.cancelled = true;
        pull.cancel();
      } else if (performance.now() - e.lastMoved > stallMs) {
        e.stalled = true;
        pull.cancel();
      }
    }, Math.max(50, Math.min(1000, stallMs / 5)));
    watch.unref();
    const out = await pull.done;
    clearInterval(watch);
    this.end(
      hostId,
      e,
      out.imageId
        ? { kind: 'pulled', imageId: out.imageId }
        : e.cancelled
          ? { kind: 'cancelled' }
          : e.stalled
            ? { kind: 'stalled', output: out.output }
            : out.cut
              ? { kind: 'interrupted', cause: new Error(`pull cut off: ${out.output}`) }
              : { kind: 'failed', output: out.output },
    );
  }

  private end(hostId: string, e: Entry, end: PullEnd): void {
    const h = this.hosts.get(hostId);
    if (h?.jobs.get(e.job.key) === e) h.jobs.delete(e.job.key);
    for (const listener of e.listeners.values()) listener(end);
    if (h && h.jobs.size === 0) this.hosts.delete(hostId);
    else this.dispatch(hostId);
  }
}
