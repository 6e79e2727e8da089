// The callers parked on one replica of the PostgreSQL queue (takes, final waiters, stream readers,
// job-stop polls) and how they are woken: by this replica's own commits at once, and by the other
// replicas' through LISTEN/NOTIFY on one channel. A NOTIFY is sent right after the commit, not inside
// it: a transaction that notifies holds PostgreSQL's global notify lock through its commit's WAL
// flush, which would make every enqueue and completion wait for the one before. Wake-ups of one
// moment share one NOTIFY. A crash between the commit and the NOTIFY loses only the wake-up: callers
// parked elsewhere find the change at their next check.
import type { Job } from '../../../model/index.ts';
import type { JobRows } from '../../../store/index.ts';
import type { StreamRead } from '../job-queue.ts';
import { decodeWakes, encodeWakes, isEmpty, type Wakes } from './effects.ts';
import { Parked, type Slot } from './parking.ts';

export interface Taker {
  workerId: string;
  slot: Slot<Job[]>;
}

type Wakeable = Parked<{ wake(): boolean }>;

export function noWakes(): Wakes {
  return { ready: [], final: [], chunk: [], stop: [], lost: [], drop: [] };
}

export class Wakeups {
  /** parked takes, by endpoint, oldest first */
  readonly takers = new Parked<Taker>();
  /** waitForFinal, by job */
  readonly finals = new Parked<Slot<{ job: Job | undefined }>>();
  /** stream reads waiting for a chunk or the final status, by job */
  readonly streams = new Parked<Slot<{ read: StreamRead | undefined }>>();
  /** job-stop polls, by worker */
  readonly stops = new Parked<Slot<string[]>>();
  private listening: { close(): Promise<void> } | undefined;
  private readonly outgoing: Record<keyof Wakes, Set<string>> = {
    ready: new Set(), final: new Set(), chunk: new Set(), stop: new Set(), lost: new Set(), drop: new Set(),
  };
  private announcing = false;
  private closed = false;

  constructor(private readonly rows: JobRows, private readonly replicaId: string) {}

  /** starts listening; a failure is the caller's (the queue does not open) */
  async start(): Promise<void> {
    // after a lost LISTEN connection anything may have happened: everything parked checks again
    this.listening = await this.rows.listen((p) => this.onNotification(p), () => this.wakeAll());
    if (this.closed) await this.listening.close();
  }

  /** every parked caller answers "nothing"; listening stops */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.takers.drainAll()) t.slot.cancel();
    for (const s of [...this.finals.drainAll(), ...this.streams.drainAll(), ...this.stops.drainAll()]) s.cancel();
    await this.listening?.close();
  }

  /** a change committed here: the callers parked here now, the other replicas by NOTIFY */
  committed(w: Wakes): void {
    this.apply(w);
    this.announce(w);
  }

  /** the oldest waiting taker of the endpoint checks the queue (it wakes the next one if it filled its batch) */
  wakeTakers(endpointId: string): void {
    for (const t of this.takers.peek(endpointId)) if (t.slot.wake()) return;
  }

  /**
   * A waiting taker to hand a new job to directly, held for it until `fulfil`. A taker still checking
   * the queue (it just arrived) is waited for: its check is one short statement, while handing it the
   * job after a NOTIFY would cost it a second take. Oldest first.
   */
  async reserveTaker(endpointId: string): Promise<Taker | undefined> {
    for (const t of this.takers.peek(endpointId)) {
      if (t.slot.reserve()) return t;
      await t.slot.checked();
      if (t.slot.reserve()) return t;
    }
    return undefined;
  }

  /** workers waiting in take here, per endpoint (for the other replicas' `depth`) */
  waiting(): Record<string, number> {
    return Object.fromEntries(this.takers.keys().map((ep) => [ep, this.takers.count(ep)]));
  }

  private announce(w: Wakes): void {
    if (isEmpty(w)) return;
    for (const k of Object.keys(w) as (keyof Wakes)[]) for (const x of w[k]) this.outgoing[k].add(x);
    if (this.announcing) return;
    this.announcing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const sets = Object.values(this.outgoing) as Set<string>[];
    while (!this.closed && sets.some((set) => set.size > 0)) {
      const w = noWakes();
      for (const k of Object.keys(w) as (keyof Wakes)[]) {
        w[k] = [...this.outgoing[k]];
        this.outgoing[k].clear();
      }
      await this.rows.announce(encodeWakes(this.replicaId, w)).catch(() => undefined);
    }
    this.announcing = false;
  }

  private onNotification(payload: string): void {
    const m = decodeWakes(payload);
    if (!m || m.from === this.replicaId || this.closed) return;
    if (m.wakes === 'all') this.wakeAll();
    else this.apply(m.wakes);
  }

  private apply(w: Wakes): void {
    for (const id of w.chunk) wakeEach(this.streams, id);
    for (const id of w.final) {
      wakeEach(this.finals, id);
      wakeEach(this.streams, id);
    }
    for (const worker of w.stop) this.stops.peek(worker).find((s) => s.wake());
    for (const ep of w.ready) this.wakeTakers(ep);
    for (const ep of w.drop) for (const t of this.takers.drain(ep)) t.slot.cancel();
    for (const worker of w.lost) {
      for (const t of this.takers.drainWhere((t) => t.workerId === worker)) t.slot.cancel();
      for (const s of this.stops.drain(worker)) s.cancel();
    }
  }

  private wakeAll(): void {
    for (const ep of this.takers.keys()) this.wakeTakers(ep);
    for (const set of [this.finals, this.streams, this.stops] as Wakeable[]) for (const key of set.keys()) wakeEach(set, key);
  }
}

function wakeEach(set: Wakeable, key: string): void {
  for (const s of set.peek(key)) s.wake();
}
