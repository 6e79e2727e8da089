// One host's GPU watch (docs/gpu-health.md): a single long-lived command on the host's background SSH
// connection (fleet/gpu-watch-script.ts: the kernel log followed, nvidia-smi polled), its lines read by
// a GpuWatchReader, and what they say committed to the host record at once (an Xid line is in the
// store well within a second of reaching us), the log position with it; the signal told after the
// commit. A session that ends is started again after a backoff; a poll that never ends is a failed read.
import type { Logger } from 'pino';
import type { Services } from '../core/index.ts';
import { GpufleetError, PROVISIONER_ACTOR } from '../model/index.ts';
import { watchScript, type SshStream } from '../fleet/index.ts';
import { GpuWatchReader, type WatchBatch, type WatchStats } from './gpu-watch-reader.ts';
import { applyWatchBatch } from './gpu-watch-apply.ts';

export interface GpuWatchSettings {
  /** seconds between nvidia-smi polls */
  pollSeconds: number;
  /** seconds one nvidia-smi call may take */
  smiTimeoutSeconds: number;
  /** how often the log position alone is written (ms) */
  positionWriteMs: number;
}

const FLUSH_DELAY_MS = 25;
const RESTART_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

export class HostGpuWatcher {
  private stream: SshStream | null = null;
  private reader: GpuWatchReader | null = null;
  private stopped = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private hungTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** a batch whose write failed, kept for the next flush of the same session only (carryUnsaved) */
  private unsaved: { session: number; batch: WatchBatch } | null = null;
  private lastPositionWrite = 0;
  private failures = 0;
  /** sessions started, for the device check and logs */
  sessions = 0;

  constructor(
    private readonly s: Services,
    readonly hostId: string,
    private readonly settings: GpuWatchSettings,
    /** this replica still watches the host (holds its reconcile lease) */
    private readonly holds: () => boolean,
    private readonly logger?: Logger,
  ) {}

  get stats(): WatchStats | null {
    return this.reader?.stats ?? null;
  }

  start(): void {
    if (this.stopped) return;
    this.s.gpuUsage.sampling(this.hostId, true);
    void this.open().catch((err: unknown) => {
      this.logger?.warn({ err, hostId: this.hostId }, 'GPU watch could not start; trying again');
      this.again();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.s.gpuUsage.sampling(this.hostId, false);
    for (const t of [this.flushTimer, this.hungTimer, this.restartTimer]) if (t) clearTimeout(t);
    this.stream?.close();
    this.stream = null;
    await this.flush(true).catch(() => undefined);
  }

  private async open(): Promise<void> {
    const host = await this.s.store.get('hosts', this.hostId);
    if (!host || this.stopped) return;
    const reader = new GpuWatchReader(host.gpuWatch, host.facts.gpus);
    // utilisation and memory go to this replica's history as each poll ends (docs/gpu-metrics.md)
    // and to the gauges of GET /metrics (docs/metrics.md)
    const indexOf = new Map(host.facts.gpus.map((g) => [g.uuid, g.index]));
    reader.onSamples = (samples) => {
      const polled = samples.map((x) => ({ uuid: x.uuid!, values: x.values }));
      const usages = this.s.gpuUsage.record(this.hostId, polled);
      this.s.telemetry.provisioner.gpusSampled(
        this.hostId,
        polled.map((g, i) => {
          const u = usages[i]!;
          return { index: indexOf.get(g.uuid) ?? -1, uuid: g.uuid, util: u.utilization === null ? null : (g.values['utilization.gpu'] ?? null), memoryUsedBytes: u.memoryUsedBytes };
        }),
      );
    };
    this.reader = reader;
    this.sessions++;
    const lines = (feed: (line: string) => void) => {
      let rest = '';
      return (chunk: Buffer) => {
        const parts = (rest + chunk.toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        for (const l of parts) feed(l.replace(/\r$/, ''));
        this.schedule();
      };
    };
    const stream = await this.s.sshPool.background(
      this.s.fleet.target(host),
      watchScript({ cursor: host.gpuWatch?.cursor ?? null, pollSeconds: this.settings.pollSeconds, smiTimeoutSeconds: this.settings.smiTimeoutSeconds }),
      {
        stdout: lines((l) => reader.stdout(l)),
        stderr: lines((l) => {
          reader.stderr(l);
          if (l.startsWith('Z ')) {
            this.failures = 0;
            this.armHung();
          }
        }),
      },
    );
    if (this.stopped) return stream.close();
    this.stream = stream;
    this.armHung();
    void stream.done.then(({ code }) => {
      if (this.stream !== stream || this.stopped) return;
      this.stream = null;
      this.logger?.info({ hostId: this.hostId, code, reader: reader.stats.readerExit }, 'GPU watch session ended; starting again');
      this.again();
    });
  }

  private again(): void {
    if (this.stopped) return;
    const wait = RESTART_MS[Math.min(this.failures++, RESTART_MS.length - 1)]!;
    this.restartTimer = setTimeout(() => this.start(), wait);
    this.restartTimer.unref();
  }

  /** A poll ends every pollSeconds; none for that plus nvidia-smi's limit and a margin is a hang. */
  private armHung(): void {
    if (this.hungTimer) clearTimeout(this.hungTimer);
    const seconds = this.settings.pollSeconds + 2 * this.settings.smiTimeoutSeconds + 5;
    this.hungTimer = setTimeout(() => {
      this.reader?.pollHung(seconds);
      this.schedule();
      this.armHung();
    }, seconds * 1000);
    this.hungTimer.unref();
  }

  private schedule(): void {
    if (this.flushTimer || this.stopped) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush(false);
    }, FLUSH_DELAY_MS);
  }

  /** Commits what the reader has (one transaction), then tells the signal; a failed write is retried with the next. */
  flush(force: boolean): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const reader = this.reader;
      if (!reader) return;
      const session = this.sessions;
      const due = force || Date.now() - this.lastPositionWrite >= this.settings.positionWriteMs;
      const fresh = reader.drain(due);
      const batch = merge(carryUnsaved(this.unsaved, session), fresh);
      if (!batch) return;
      // another replica may hold the host now: what this one read is left for it to read again
      if (!this.holds()) {
        this.unsaved = null;
        return;
      }
      const at = new Date().toISOString();
      try {
        const signals = await this.s.store.transact(async (tx) => {
          const host = await tx.get('hosts', this.hostId);
          if (!host) throw new GpufleetError('NOT_FOUND', `host ${this.hostId} is gone`);
          const r = applyWatchBatch(host, batch, at);
          tx.put('hosts', r.host);
          return r.signals;
        }, { actor: PROVISIONER_ACTOR });
        this.unsaved = null;
        this.lastPositionWrite = Date.now();
        for (const e of signals) this.s.gpuHealthSignal.publish(e, (err) => this.logger?.error({ err, hostId: this.hostId }, 'a GPU health listener failed'));
      } catch (err) {
        this.unsaved = { session, batch };
        this.logger?.warn({ err, hostId: this.hostId }, 'GPU watch: could not record what the host showed; trying again');
        if (!this.stopped) setTimeout(() => void this.flush(true), 1000).unref();
      }
    });
    return this.flushing;
  }
}

/**
 * What of a failed write the next flush commits: all of it within the session that read it; nothing
 * once a new session started, since that session re-reads from the stored position (kernel lines from
 * the stored cursor, counters against the stored values), so keeping the batch would commit its Xid
 * lines and counter rises twice.
 */
export function carryUnsaved(unsaved: { session: number; batch: WatchBatch } | null, session: number): WatchBatch | null {
  return unsaved && unsaved.session === session ? unsaved.batch : null;
}

/** Two batches in order as one: the later watch state, both observation lists. */
function merge(a: WatchBatch | null, b: WatchBatch | null): WatchBatch | null {
  if (!a) return b;
  if (!b) return a;
  return { observations: [...a.observations, ...b.observations], busIds: { ...a.busIds, ...b.busIds }, watch: b.watch, substantive: true };
}
