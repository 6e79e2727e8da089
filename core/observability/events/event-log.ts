// The retained events, in memory (docs/events.md): a ring of at most `total` events, and per
// resource at most `perResource` of them, so a pod that flaps cannot push every other resource's
// history out. With an archive (event-archive.ts) each event is also written beside the data dir
// and the log starts from the archived ones, so events survive a restart; `seq` goes on from the
// newest archived event, so it increases across runs too.
import type { FleetEvent } from '../../../model/index.ts';
import type { EventArchive } from './event-archive.ts';

export interface EventRetention {
  /** events kept per resource (its newest) */
  perResource: number;
  /** events kept in all (the newest) */
  total: number;
}

export const DEFAULT_EVENT_RETENTION: EventRetention = Object.freeze({ perResource: 100, total: 10_000 });

export type EventListener = (e: FleetEvent) => void;

export class EventLog {
  /** names this run in event ids (`<run>-<seq>`) */
  readonly run = Date.now().toString(36);
  private archive: EventArchive | null = null;
  /** runs whose events were loaded from the archive, and this one: their ids resume a follow */
  private readonly runs = new Set<string>([this.run]);
  private seq = 0;
  /** ring of the newest `total` events, oldest at `head` */
  private readonly ring: (FleetEvent | undefined)[];
  private head = 0;
  private size = 0;
  private readonly byResource = new Map<string, FleetEvent[]>();
  private readonly listeners = new Set<EventListener>();

  constructor(readonly retention: EventRetention = DEFAULT_EVENT_RETENTION) {
    this.ring = new Array<FleetEvent | undefined>(retention.total);
  }

  /**
   * Starts from the archive's events (under this log's retention) and writes every new one to it.
   * Called once, before the first append.
   */
  async useArchive(archive: EventArchive): Promise<void> {
    const seen = new Set<string>();
    for (const e of (await archive.load()).sort((a, b) => a.seq - b.seq)) {
      if (seen.has(e.id) || e.seq <= this.seq) continue;
      seen.add(e.id);
      this.seq = e.seq;
      this.runs.add(e.id.slice(0, e.id.lastIndexOf('-')));
      this.keep(Object.freeze({ ...e }));
    }
    this.archive = archive;
  }

  append(e: Omit<FleetEvent, 'id' | 'seq' | 'time'> & { time?: string }): FleetEvent {
    const seq = ++this.seq;
    const event: FleetEvent = Object.freeze({ ...e, id: `${this.run}-${seq}`, seq, time: e.time ?? new Date().toISOString() });
    this.keep(event);
    this.archive?.append(event, () => this.all());
    // told outside the store's commit that caused the event
    if (this.listeners.size > 0)
      queueMicrotask(() => {
        for (const l of this.listeners) l(event);
      });
    return event;
  }

  private keep(event: FleetEvent): void {
    if (this.size === this.retention.total) {
      const evicted = this.ring[this.head]!;
      this.head = (this.head + 1) % this.retention.total;
      this.size--;
      this.dropFromResource(evicted);
    }
    this.ring[(this.head + this.size) % this.retention.total] = event;
    this.size++;
    let list = this.byResource.get(event.resourceId);
    if (!list) this.byResource.set(event.resourceId, (list = []));
    list.push(event);
    if (list.length > this.retention.perResource) list.shift();
  }

  /** Retained events, oldest first, that `keep` accepts. */
  all(keep: (e: FleetEvent) => boolean = () => true): FleetEvent[] {
    const out: FleetEvent[] = [];
    for (let i = 0; i < this.size; i++) {
      const e = this.ring[(this.head + i) % this.retention.total]!;
      if (keep(e)) out.push(e);
    }
    return out;
  }

  /** A resource's retained events, oldest first. */
  forResource(resourceId: string): readonly FleetEvent[] {
    return this.byResource.get(resourceId) ?? [];
  }

  /** The resource's newest `n` events, oldest first. */
  recent(resourceId: string, n: number): FleetEvent[] {
    return n <= 0 ? [] : this.forResource(resourceId).slice(-n);
  }

  /**
   * The seq a Last-Event-ID names: events after it are new to the client. seq increases across runs
   * (it goes on from the archive), so an id of a run whose events were archived resumes too; an id
   * of an unknown run, or past the newest seq, is 0: every retained event.
   */
  seqAfter(lastEventId: string): number {
    const m = /^([0-9a-z]+)-(\d{1,15})$/.exec(lastEventId);
    return m && this.runs.has(m[1]!) && Number(m[2]) <= this.seq ? Number(m[2]) : 0;
  }

  /** Writes what the archive has queued (the control plane is closing). */
  async close(): Promise<void> {
    await this.archive?.close();
  }

  /** Every event appended from now on, until the returned function is called. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private dropFromResource(e: FleetEvent): void {
    const list = this.byResource.get(e.resourceId);
    if (list?.[0]?.seq === e.seq) list.shift();
    if (list?.length === 0) this.byResource.delete(e.resourceId);
  }
}
