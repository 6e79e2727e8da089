// Serverless endpoints' metrics over time (GET /v2/serverless/{id}/metrics; docs/serverless.md,
// "Metrics over time"). What happens is recorded in 10-second slots per endpoint and kept 24 hours, in
// this process's memory and, where a store is given, in the store (endpoint-history-store.ts: each
// process writes its slots every 10 s, and a query adds every other writer's, so a restart or
// another replica leaves no gap): jobs finished by status, each job's delay (in the slot it was taken) and
// execution time (in the slot it finished), from the queue's onFinal; each worker's cold start (from
// its record to its first contact), from WorkerService.onReady; and, sampled every 10 s, workers by
// state and the queue's depth, or a load balancer's requests held and in flight (kept only when they
// change, and carried forward). A query sums the
// slots into buckets of its step.
import { randomBytes } from 'node:crypto';
import type { EndpointMetricSlotRecord, FinalStatus, Job } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { JobQueue, WorkerCountsSource, WorkerStateCounts } from '../jobs/index.ts';
import { foldSlots, HISTORY_RETENTION_MS, HISTORY_SLOT_MS, SlotHistory, slotOf } from '../observability/index.ts';
import { hourOf, slotRecordId, StoredSlots } from './endpoint-history-store.ts';
import { LogHistogram } from './log-histogram.ts';

// the slots and their retention are the metrics-over-time routes' (core/observability/slot-history.ts)
export { HISTORY_RETENTION_MS, HISTORY_SLOT_MS };

interface Slot {
  jobs: Record<FinalStatus, number>;
  delay: LogHistogram;
  execution: LogHistogram;
  coldStart: LogHistogram;
}

export interface WorkerGauges {
  idle: number;
  running: number;
  initializing: number;
  throttled: number;
  unhealthy: number;
}

interface GaugeSample {
  at: number;
  workers: WorkerGauges;
  /** the job queue's (shared by every replica) */
  inQueue: number;
  inProgress: number;
  /** this process's load-balancer requests (its own gateway's); absent: none */
  requests?: { inQueue: number; inProgress: number };
  /** in a query: the process that took it (each writer's last requests are added up) */
  writer?: string;
}

export interface Percentiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

export interface MetricsBucket {
  /** RFC 3339: the bucket is [start, start + step) */
  start: string;
  /** workers by state at the bucket's end (the last sample before it); null before recording began */
  workers: WorkerGauges | null;
  /** the queue at the bucket's end, and the most jobs waiting at any sample within it; null before recording began */
  queue: { inQueue: number; inProgress: number; maxInQueue: number } | null;
  /** jobs that reached a final status within the bucket */
  jobs: { completed: number; failed: number; cancelled: number; timedOut: number };
  /** ms from queueing to the take, of jobs taken within the bucket */
  delayMs: Percentiles;
  /** ms from the take to the final status, of jobs finished within the bucket */
  executionMs: Percentiles;
  /** ms from a worker's record to its first contact, of workers ready within the bucket */
  coldStartMs: Percentiles;
}

export interface HistoryDeps {
  endpointIds(): Promise<string[]>;
  queue: Pick<JobQueue, 'counts' | 'onFinal'>;
  workers: WorkerCountsSource & {
    onReady(listener: (endpointId: string, coldStartMs: number) => void): () => void;
    /** a load-balancing endpoint's requests held for a worker and in flight, as this replica's gateway sees them */
    requests: { depth(endpointId: string): { inQueue: number; inProgress: number } };
  };
  clock?: () => number;
  /** between samples of workers and queue depth; default HISTORY_SLOT_MS */
  sampleEveryMs?: number;
  /** where the slots are kept beyond this process (none: memory only) */
  store?: Store;
  /** this process's name in the stored slots; default a random one per process */
  writer?: string;
}

/** the sweep of stored slots past retention runs every this many samples (10 minutes) */
const SWEEP_EVERY = 60;

export class EndpointHistory {
  private readonly slots = new SlotHistory<Slot>(() => emptySlot());
  private readonly samples = new Map<string, GaugeSample[]>();
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  /** the periodic sample under way: the next is scheduled when it ends, and stop() waits for it */
  private sampling: Promise<void> | null = null;
  private stopped = false;
  private started = false;
  /** the writes, one after another: a later one never commits before an earlier one (an older record never wins) */
  private writes: Promise<void> = Promise.resolve();
  private readonly unsubscribe: (() => void)[] = [];
  /** @internal the stored side (tests read its recordsRead) */
  readonly stored: StoredSlots | null;
  /** `<endpoint id>\n<slot start>`: slots changed since they were last written */
  private readonly dirty = new Set<string>();
  private samplesTaken = 0;

  constructor(private readonly deps: HistoryDeps) {
    this.clock = deps.clock ?? Date.now;
    this.stored = deps.store ? new StoredSlots(deps.store, deps.writer ?? `p${process.pid}-${randomBytes(6).toString('hex')}`) : null;
  }

  /** starts once: a stopped history is not started again (its sample loop could run twice) */
  start(): void {
    if (this.started) throw new Error('an endpoint history starts once');
    this.started = true;
    this.unsubscribe.push(this.deps.queue.onFinal((job) => this.recordJob(job)));
    this.unsubscribe.push(this.deps.workers.onReady((endpointId, ms) => this.slot(endpointId, this.clock()).coldStart.add(ms)));
    const tick = (): void => {
      this.timer = null;
      // a store that cannot be read now: the next sample tries again
      this.sampling = this.sample()
        .catch(() => undefined)
        .finally(() => {
          this.sampling = null;
          if (this.stopped) return;
          this.timer = setTimeout(tick, this.deps.sampleEveryMs ?? HISTORY_SLOT_MS);
          this.timer.unref();
        });
    };
    tick();
  }

  /** stops sampling and writes what is not written yet (after the sample under way, if any, has ended) */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const u of this.unsubscribe.splice(0)) u();
    await this.sampling;
    await this.flush().catch(() => undefined);
  }

  recordJob(job: Job): void {
    const finished = job.finishedAt ?? this.clock();
    const s = this.slot(job.endpointId, finished);
    s.jobs[job.status as FinalStatus] = (s.jobs[job.status as FinalStatus] ?? 0) + 1;
    if (job.executionTime !== undefined) s.execution.add(job.executionTime);
    if (job.delayTime !== undefined) this.slot(job.endpointId, job.startedAt ?? finished).delay.add(job.delayTime);
  }

  /** Samples every endpoint's workers and queue; forgets endpoints that are gone and what is past retention. */
  async sample(): Promise<void> {
    const now = this.clock();
    const ids = new Set(await this.deps.endpointIds());
    for (const id of [...this.slots.keys(), ...this.samples.keys()]) if (!ids.has(id)) this.forget(id);
    for (const id of ids) {
      const [w, q] = await Promise.all([this.deps.workers.counts(id), this.deps.queue.counts(id)]);
      // a queue endpoint has jobs and no requests; a load balancer requests and no jobs
      const r = this.deps.workers.requests.depth(id);
      const requests = r.inQueue || r.inProgress ? { requests: { inQueue: r.inQueue, inProgress: r.inProgress } } : {};
      this.addSample(id, { at: now, workers: gauges(w), inQueue: q.inQueue, inProgress: q.inProgress, ...requests });
    }
    this.prune(now);
    await this.flush();
    if (this.stored && this.samplesTaken++ % SWEEP_EVERY === 0) await this.stored.sweep(now - HISTORY_RETENTION_MS, this.samplesTaken === 1);
  }

  /** writes the slots changed since the last write (one transaction, after the writes before it); those not written stay to write */
  flush(): Promise<void> {
    const write = this.writes.then(() => this.writeDirty());
    this.writes = write.catch(() => undefined);
    return write;
  }

  private async writeDirty(): Promise<void> {
    if (!this.stored || !this.dirty.size) return;
    const keys = [...this.dirty];
    this.dirty.clear();
    try {
      await this.stored.write(keys.map((k) => this.recordOf(k)).filter((r): r is EndpointMetricSlotRecord => r !== null));
    } catch (e) {
      for (const k of keys) this.dirty.add(k);
      throw e;
    }
  }

  forget(endpointId: string): void {
    this.slots.forget(endpointId);
    this.samples.delete(endpointId);
    for (const k of [...this.dirty]) if (k.startsWith(`${endpointId}\n`)) this.dirty.delete(k);
    this.stored?.forget(endpointId).catch(() => undefined);
  }

  /** The buckets [from, to) of `step` ms (all three multiples of HISTORY_SLOT_MS): this process's slots and every other writer's stored ones. */
  async query(endpointId: string, from: number, to: number, step: number): Promise<MetricsBucket[]> {
    const own = this.slots.of(endpointId);
    const ownSamples = this.samples.get(endpointId) ?? [];
    if (!this.stored) return this.buckets(own, ownSamples, from, to, step);
    const [others, carried] = await Promise.all([
      this.stored.others(endpointId, from, to),
      this.stored.carried(endpointId, from, this.clock() - HISTORY_RETENTION_MS, lastBefore(ownSamples, from)?.at),
    ]);
    const slots = new Map<number, Slot>();
    for (const [at, s] of own ?? []) slots.set(at, mergeSlot(emptySlot(), s));
    for (const r of others) slots.set(r.at, mergeSlot(slots.get(r.at) ?? emptySlot(), slotFromRecord(r)));
    const samples = [
      ...ownSamples.map((x) => ({ ...x, writer: this.stored!.writer })),
      ...others.flatMap((r) => r.samples.map((x) => ({ ...x, writer: r.writer }))),
      ...(carried ? [{ ...carried, writer: '(carried)' }] : []),
    ].sort((a, b) => a.at - b.at);
    return this.buckets(slots, samples, from, to, step);
  }

  private buckets(slots: ReadonlyMap<number, Slot> | undefined, samples: GaugeSample[], from: number, to: number, step: number): MetricsBucket[] {
    let k = 0; // samples before the current bucket's end
    // each writer's last load-balancer requests, and the queue (job queue + every writer's requests) after sample k - 1
    const requests = new Map<string | undefined, { inQueue: number; inProgress: number }>();
    let now = { inQueue: 0, inProgress: 0 };
    return foldSlots(slots, from, to, step, (within, start, end) => {
      const acc = emptySlot();
      for (const s of within) mergeSlot(acc, s);
      // the value carried into the bucket counts toward its maximum too
      let maxInQueue = k > 0 ? now.inQueue : 0;
      while (k < samples.length && samples[k]!.at < end) {
        now = step1(requests, samples[k++]!);
        maxInQueue = Math.max(maxInQueue, now.inQueue);
      }
      const last = k > 0 ? samples[k - 1]! : null;
      return {
        start: new Date(start).toISOString(),
        workers: last ? { ...last.workers } : null,
        queue: last ? { inQueue: now.inQueue, inProgress: now.inProgress, maxInQueue } : null,
        jobs: { completed: acc.jobs.COMPLETED, failed: acc.jobs.FAILED, cancelled: acc.jobs.CANCELLED, timedOut: acc.jobs.TIMED_OUT },
        delayMs: percentiles(acc.delay),
        executionMs: percentiles(acc.execution),
        coldStartMs: percentiles(acc.coldStart),
      };
    });
  }

  private slot(endpointId: string, t: number): Slot {
    if (this.stored) this.dirty.add(`${endpointId}\n${slotOf(t)}`);
    return this.slots.at(endpointId, t);
  }

  /** the stored record of one of this process's slots: its counts and the samples taken in it */
  private recordOf(key: string): EndpointMetricSlotRecord | null {
    const [endpointId, atText] = key.split('\n') as [string, string];
    const at = Number(atText);
    const samples = (this.samples.get(endpointId) ?? []).filter((x) => slotOf(x.at) === at);
    const kept = this.slots.of(endpointId)?.get(at);
    // past retention (pruned from memory before it was written): nothing to write
    if (!kept && !samples.length) return null;
    const s = kept ?? emptySlot();
    const writer = this.stored!.writer;
    return {
      id: slotRecordId(endpointId, at, writer),
      endpointId,
      at,
      hour: hourOf(at),
      writer,
      jobs: { ...s.jobs },
      delay: s.delay.toStored(),
      execution: s.execution.toStored(),
      coldStart: s.coldStart.toStored(),
      samples: samples.map((x) => ({ ...x, workers: { ...x.workers } })),
    };
  }

  /** kept when it differs from the last one (a quiet endpoint costs one sample a day) */
  private addSample(endpointId: string, s: GaugeSample): void {
    let list = this.samples.get(endpointId);
    if (!list) this.samples.set(endpointId, (list = []));
    const last = list.at(-1);
    if (last && sameGauges(last, s)) return;
    list.push(s);
    if (this.stored) this.dirty.add(`${endpointId}\n${slotOf(s.at)}`);
  }

  private prune(now: number): void {
    const cutoff = now - HISTORY_RETENTION_MS;
    this.slots.prune(now);
    for (const list of this.samples.values()) {
      // the last sample before the cutoff stays: it is the value carried into the oldest bucket
      let drop = 0;
      while (drop + 1 < list.length && list[drop + 1]!.at <= cutoff) drop++;
      if (drop > 0) list.splice(0, drop);
    }
  }
}

/** the queue after sample `s`: the job queue's as it says, plus each writer's last requests (`requests`, updated) */
function step1(requests: Map<string | undefined, { inQueue: number; inProgress: number }>, s: GaugeSample): { inQueue: number; inProgress: number } {
  requests.set(s.writer, s.requests ?? { inQueue: 0, inProgress: 0 });
  let inQueue = s.inQueue;
  let inProgress = s.inProgress;
  for (const r of requests.values()) {
    inQueue += r.inQueue;
    inProgress += r.inProgress;
  }
  return { inQueue, inProgress };
}

/** the last of `samples` (in time order) before `t` */
function lastBefore(samples: GaugeSample[], t: number): GaugeSample | undefined {
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid]!.at < t) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? samples[lo - 1] : undefined;
}

const emptyJobs = (): Record<FinalStatus, number> => ({ COMPLETED: 0, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0 });

const emptySlot = (): Slot => ({ jobs: emptyJobs(), delay: new LogHistogram(), execution: new LogHistogram(), coldStart: new LogHistogram() });

/** adds `b` into `a` (a fresh slot: this process's own are never changed by a query) */
function mergeSlot(a: Slot, b: Slot): Slot {
  for (const st of Object.keys(b.jobs) as FinalStatus[]) a.jobs[st] = (a.jobs[st] ?? 0) + b.jobs[st];
  a.delay.merge(b.delay);
  a.execution.merge(b.execution);
  a.coldStart.merge(b.coldStart);
  return a;
}

const slotFromRecord = (r: EndpointMetricSlotRecord): Slot => ({
  jobs: { ...emptyJobs(), ...r.jobs },
  delay: LogHistogram.fromStored(r.delay),
  execution: LogHistogram.fromStored(r.execution),
  coldStart: LogHistogram.fromStored(r.coldStart),
});

const gauges = (c: WorkerStateCounts): WorkerGauges => ({ idle: c.idle, running: c.running, initializing: c.initializing, throttled: c.throttled, unhealthy: c.unhealthy });

function sameGauges(a: GaugeSample, b: GaugeSample): boolean {
  return (
    a.inQueue === b.inQueue &&
    a.inProgress === b.inProgress &&
    (a.requests?.inQueue ?? 0) === (b.requests?.inQueue ?? 0) &&
    (a.requests?.inProgress ?? 0) === (b.requests?.inProgress ?? 0) &&
    (Object.keys(a.workers) as (keyof WorkerGauges)[]).every((k) => a.workers[k] === b.workers[k])
  );
}

function percentiles(h: LogHistogram): Percentiles {
  const r = (v: number | null): number | null => (v === null ? null : Math.round(v));
  return { count: h.count, p50: r(h.quantile(0.5)), p90: r(h.quantile(0.9)), p99: r(h.quantile(0.99)) };
}
