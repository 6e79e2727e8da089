// The queue's state in memory, changed only by applying log records, so replay after a restart and
// the live path run the same code. Jobs are frozen records; applying a record replaces one. The
// table keeps the indexes the queue needs: per-endpoint lanes of queued ids (insertion-ordered
// sets, O(1) removal), in-progress ids per worker, counts per endpoint, and a deadline heap.
import type { EndpointCounts, PendingWebhook, QueueDepth } from './job-queue.ts';
import { isFinal, resultExpiry, type Job, type Retention } from '../../model/index.ts';
import { DeadlineHeap, type DeadlineKind } from './deadline-heap.ts';
import type { LogRecord, SubmittedJob } from './log-record.ts';
import { CompletionOrder, type Completion } from './completion-order.ts';
import type { JobListFilter } from '../../store/index.ts';
import { CreationOrder } from './creation-order.ts';

export interface TableOptions {
  leaseMs: number;
  retention: Retention;
}

/** requeued jobs are served first, then normal ones, then lowPriority */
interface Lanes {
  retry: Set<string>;
  normal: Set<string>;
  low: Set<string>;
}

/** a comes before b in newest-first order: createdAt descending, then id descending (code points, as the PostgreSQL queue's COLLATE "C") */
function newerFirst(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
}

export class JobTable {
  readonly jobs = new Map<string, Job>();
  readonly streams = new Map<string, unknown[]>();
  readonly cursors = new Map<string, number>();
  readonly lanes = new Map<string, Lanes>();
  readonly byEndpoint = new Map<string, Set<string>>();
  /** each endpoint's ids in the order added, for listJobs (creation-order.ts) */
  private readonly order = new CreationOrder();
  /** ids listJobs has looked at since this table was made (a test's measure of its cost) */
  listScanned = 0;
  readonly byWorker = new Map<string, Set<string>>();
  readonly stats = new Map<string, EndpointCounts>();
  readonly deadlines = new DeadlineHeap();
  /**
   * webhook deliveries of final jobs not yet delivered nor given up, with the job as it was final
   * (kept here, not in `jobs`: a delivery outlives the job's retention)
   */
  readonly webhooks = new Map<string, PendingWebhook>();
  /** COMPLETED jobs per endpoint in (finishedAt, id) order, for the endpoints `completedJobs` is asked about */
  private readonly completions = new CompletionOrder((id) => this.jobs.get(id)?.status === 'COMPLETED');

  constructor(private readonly opts: TableOptions) {}

  apply(rec: LogRecord): Job | undefined {
    if (rec.t === 'nop') return undefined;
    if (rec.t === 'wh') {
      const p = this.webhooks.get(rec.id);
      if (p) this.webhooks.set(rec.id, { ...p, attempts: rec.attempts, nextAt: rec.nextAt });
      return undefined;
    }
    if (rec.t === 'whx') {
      this.webhooks.delete(rec.id);
      return undefined;
    }
    if (rec.t === 'whp') {
      this.webhooks.set(rec.job.id, { job: rec.job, attempts: rec.attempts, nextAt: rec.nextAt });
      return undefined;
    }
    if (rec.t === 'drop') {
      for (const id of [...(this.byEndpoint.get(rec.endpointId) ?? [])]) this.remove(id);
      return undefined;
    }
    if (rec.t === 'enq') {
      const j = rec.job;
      return this.set(jobRecord(j, { status: 'IN_QUEUE', queuedAt: j.createdAt, retries: 0, autoRetries: 0, expiresAt: j.createdAt + j.policy.ttl }));
    }
    if (rec.t === 'put') {
      this.streams.set(rec.job.id, rec.stream);
      return this.set(jobRecord(rec.job, rec.job));
    }
    const old = this.jobs.get(rec.id);
    if (!old) return undefined; // a record of a job since expired (replay of an older generation)
    if (rec.t === 'chunk') {
      let s = this.streams.get(rec.id);
      if (!s) this.streams.set(rec.id, (s = []));
      s.push(rec.output);
      return old;
    }
    const next = jobRecord(old, old);
    switch (rec.t) {
      case 'take':
        if (old.status !== 'IN_QUEUE') return old;
        next.status = 'IN_PROGRESS';
        next.workerId = rec.worker;
        next.startedAt = rec.at;
        next.delayTime = rec.at - old.queuedAt;
        next.leaseExpiresAt = rec.at + this.opts.leaseMs;
        clear(next, ['finishedAt', 'executionTime', 'output', 'error', 'expiresAt']);
        break;
      case 'prog':
        if (old.status !== 'IN_PROGRESS') return old;
        next.output = rec.output;
        next.leaseExpiresAt = Math.max(old.leaseExpiresAt ?? 0, rec.at + this.opts.leaseMs);
        break;
      case 'fin': {
        if (isFinal(old.status)) return old;
        next.status = rec.status;
        next.finishedAt = rec.at;
        if (old.status === 'IN_PROGRESS' && old.startedAt !== undefined) next.executionTime = rec.at - old.startedAt;
        if ('output' in rec) next.output = rec.output;
        else if (rec.status === 'COMPLETED' || rec.status === 'FAILED') next.output = undefined;
        if (rec.error !== undefined) next.error = rec.error;
        next.leaseExpiresAt = undefined;
        next.expiresAt = rec.expired ? rec.at : resultExpiry(old, rec.at, this.opts.retention);
        const job = this.set(next);
        if (job.webhook !== undefined) this.webhooks.set(job.id, { job, attempts: 0, nextAt: rec.at });
        return job;
      }
      case 'ttl': {
        const ends = rec.at + rec.ttl;
        // the policy keeps "ttl from queuedAt", so a later fin computes the result's expiry from it
        next.policy = Object.freeze({ ...old.policy, ttl: Math.max(1, ends - old.queuedAt) });
        if (old.status !== 'IN_PROGRESS') next.expiresAt = ends;
        const job = this.set(next);
        // set() adds deadlines only on a change of status; this one may have moved earlier
        const kind: DeadlineKind | undefined = job.status === 'IN_QUEUE' ? 'ttl' : isFinal(job.status) ? 'expire' : undefined;
        if (kind) this.deadlines.push({ at: ends, id: job.id, kind });
        return job;
      }
      case 'rq': {
        if (old.status === 'IN_QUEUE' || old.status === 'COMPLETED' || old.status === 'CANCELLED') return old;
        next.status = 'IN_QUEUE';
        if (rec.cause !== 'undelivered') next.retries = old.retries + 1;
        if (rec.cause === 'lost' || rec.cause === 'error') next.autoRetries = old.autoRetries + 1;
        if (rec.cause === 'retry') {
          next.autoRetries = 0;
          next.queuedAt = rec.at;
        }
        clear(next, ['workerId', 'startedAt', 'finishedAt', 'leaseExpiresAt', 'delayTime', 'executionTime', 'output', 'error']);
        next.expiresAt = next.queuedAt + old.policy.ttl;
        return this.set(next, rec.cause !== 'retry');
      }
    }
    return this.set(next);
  }

  /** the job unless it is unknown or its result has expired */
  find(id: string, now: number): Job | undefined {
    const job = this.jobs.get(id);
    if (!job || (isFinal(job.status) && job.expiresAt !== undefined && job.expiresAt <= now)) return undefined;
    return job;
  }

  /** up to `limit` of the endpoint's COMPLETED jobs after `after` in (finishedAt, id) order, expired ones left out */
  completedAfter(endpointId: string, after: Completion, limit: number, now: number): Job[] {
    const answers = (c: Completion): boolean => {
      const job = this.find(c.id, now);
      return job?.status === 'COMPLETED' && job.finishedAt === c.finishedAt;
    };
    const all = (): Completion[] =>
      [...(this.byEndpoint.get(endpointId) ?? [])].flatMap((id) => {
        const job = this.jobs.get(id)!;
        return job.status === 'COMPLETED' ? [{ finishedAt: job.finishedAt!, id }] : [];
      });
    return this.completions.page(endpointId, after, limit, answers, all).map((c) => this.jobs.get(c.id)!);
  }

  /**
   * `listJobs`: a page of the account's jobs of the endpoint that `find` shows, newest first by
   * (createdAt, id). One pass over the endpoint's jobs (it holds only those within retention) that
   * keeps the `limit` newest after the cursor in a sorted array: no sort of the whole endpoint
   * (bench/job-history.ts).
   */
  listJobs(f: JobListFilter, now: number): Job[] {
    const statuses = f.statuses ? new Set<string>(f.statuses) : null;
    const after = f.after;
    const page: Job[] = [];
    if (f.limit < 1) return page;
    // newest last as a rule (ids are added as jobs are submitted): read from the end, below the jobs
    // newer than the cursor, and stop once the page is full and every job added before is older
    for (const { id, upTo } of this.order.newestFirst(f.endpointId, after?.createdAt)) {
      if (page.length === f.limit && upTo < page[page.length - 1]!.createdAt) break;
      this.listScanned++;
      const job = this.jobs.get(id);
      if (!job || job.endpointId !== f.endpointId) continue;
      if (job.accountId !== f.accountId || (statuses && !statuses.has(job.status))) continue;
      if (after && !newerFirst(after, job)) continue;
      if (page.length === f.limit && !newerFirst(job, page[page.length - 1]!)) continue;
      if (!this.find(id, now) || page.includes(job)) continue;
      let lo = 0;
      let hi = page.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (newerFirst(page[mid]!, job)) lo = mid + 1;
        else hi = mid;
      }
      page.splice(lo, 0, job);
      if (page.length > f.limit) page.pop();
    }
    return page;
  }

  /** ids of the jobs `workerId` holds IN_PROGRESS */
  heldBy(workerId: string): string[] {
    return [...(this.byWorker.get(workerId) ?? [])];
  }

  /** up to `max` queued ids of the endpoint, in the order they are served */
  nextQueued(endpointId: string, max: number): string[] {
    const l = this.lanes.get(endpointId);
    const out: string[] = [];
    if (!l) return out;
    for (const lane of [l.retry, l.normal, l.low]) {
      for (const id of lane) {
        if (out.length >= max) return out;
        out.push(id);
      }
    }
    return out;
  }

  countsOf(endpointId: string): EndpointCounts {
    const s = this.stats.get(endpointId);
    return s ? { ...s } : { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 };
  }

  /** what the autoscaler reads; lowPriority jobs are not demand */
  depthOf(endpointId: string, now: number): Omit<QueueDepth, 'waitingWorkers'> {
    const l = this.lanes.get(endpointId);
    let oldest = now;
    if (l) {
      for (const id of l.retry) oldest = Math.min(oldest, this.jobs.get(id)!.queuedAt);
      const first = l.normal.values().next().value;
      if (first !== undefined) oldest = Math.min(oldest, this.jobs.get(first)!.queuedAt);
    }
    return {
      inQueue: l ? l.retry.size + l.normal.size : 0,
      lowPriority: l?.low.size ?? 0,
      inProgress: this.stats.get(endpointId)?.inProgress ?? 0,
      oldestAgeMs: now - oldest,
    };
  }

  /** whether a deadline entry is due (it may be a stale hint: nextDue re-checks it) */
  hasDue(now: number): boolean {
    return this.deadlines.hasDue(now);
  }

  /** pops the next deadline that is due and still holds for its job */
  nextDue(now: number): { kind: Exclude<DeadlineKind, 'expire'>; job: Job } | undefined {
    for (let d = this.deadlines.popDue(now); d; d = this.deadlines.popDue(now)) {
      const job = this.jobs.get(d.id);
      if (!job) continue;
      const at = deadlineOf(job, d.kind);
      if (at === undefined) continue; // the job has moved on
      if (at > now) {
        this.deadlines.push({ at, id: d.id, kind: d.kind }); // moved later (heartbeat, retake)
        continue;
      }
      if (d.kind === 'expire') this.remove(d.id);
      else return { kind: d.kind, job };
    }
    return undefined;
  }

  /** after a restart, running jobs get a full lease: their workers may be pinging right now */
  extendLeases(until: number): void {
    const running = [...this.byWorker.values()].flatMap((ids) => [...ids]);
    for (const id of running) {
      const job = this.jobs.get(id)!;
      if ((job.leaseExpiresAt ?? 0) < until) this.set({ ...job, leaseExpiresAt: until });
    }
  }

  /** a heartbeat or stream chunk from the holder; in memory only (docs/jobs.md, "Leases") */
  renewLease(id: string, until: number): void {
    const job = this.jobs.get(id);
    if (job?.status === 'IN_PROGRESS' && (job.leaseExpiresAt ?? 0) < until) this.set({ ...job, leaseExpiresAt: until });
  }

  remove(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.index(job, -1);
    this.jobs.delete(id);
    this.streams.delete(id);
    this.cursors.delete(id);
    if (job.status === 'COMPLETED') this.completions.removed(job.endpointId);
    const ids = this.byEndpoint.get(job.endpointId);
    ids?.delete(id);
    this.order.removed(job.endpointId, (other) => (other !== id ? this.jobs.get(other)?.createdAt : undefined));
    if (ids?.size === 0) {
      this.byEndpoint.delete(job.endpointId);
      this.lanes.delete(job.endpointId);
      this.stats.delete(job.endpointId);
      this.completions.forget(job.endpointId);
    }
  }

  private set(job: Job, front = false): Job {
    const old = this.jobs.get(job.id);
    if (old) this.index(old, -1);
    Object.freeze(job);
    this.jobs.set(job.id, job);
    let ids = this.byEndpoint.get(job.endpointId);
    if (!ids) this.byEndpoint.set(job.endpointId, (ids = new Set()));
    if (!ids.has(job.id)) this.order.add(job.endpointId, job.id, job.createdAt);
    ids.add(job.id);
    this.index(job, 1, front);
    if (job.status === 'COMPLETED' ? old?.status !== 'COMPLETED' || old.finishedAt !== job.finishedAt : old?.status === 'COMPLETED') {
      if (old?.status === 'COMPLETED') this.completions.removed(job.endpointId);
      if (job.status === 'COMPLETED') this.completions.completed(job.endpointId, { finishedAt: job.finishedAt!, id: job.id });
    }
    // a deadline for every state that has one; re-checked when popped
    const kinds: DeadlineKind[] = job.status === 'IN_QUEUE' ? ['ttl'] : job.status === 'IN_PROGRESS' ? ['lease', 'exec'] : ['expire'];
    if (old?.status !== job.status || old.startedAt !== job.startedAt) {
      for (const kind of kinds) this.deadlines.push({ at: deadlineOf(job, kind)!, id: job.id, kind });
      // entries of jobs that moved on wait for their time (a ttl entry: up to 7 days); rebuild
      // the heap from the live jobs before such entries outnumber them
      if (this.deadlines.size > 4 * this.jobs.size + 1024) this.rebuildDeadlines();
    }
    return job;
  }

  private rebuildDeadlines(): void {
    this.deadlines.clear();
    for (const job of this.jobs.values()) {
      for (const kind of ['ttl', 'lease', 'exec', 'expire'] as const) {
        const at = deadlineOf(job, kind);
        if (at !== undefined) this.deadlines.push({ at, id: job.id, kind });
      }
    }
  }

  private index(job: Job, sign: 1 | -1, front = false): void {
    let s = this.stats.get(job.endpointId);
    if (!s) this.stats.set(job.endpointId, (s = { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 }));
    if (job.retries > 0) s.retried += sign;
    if (job.status === 'COMPLETED') s.completed += sign;
    else if (job.status === 'FAILED' || job.status === 'TIMED_OUT') s.failed += sign;
    else if (job.status === 'IN_PROGRESS') {
      s.inProgress += sign;
      let w = this.byWorker.get(job.workerId!);
      if (!w) this.byWorker.set(job.workerId!, (w = new Set()));
      if (sign > 0) w.add(job.id);
      else if (w.delete(job.id) && w.size === 0) this.byWorker.delete(job.workerId!);
    } else if (job.status === 'IN_QUEUE') {
      s.inQueue += sign;
      let l = this.lanes.get(job.endpointId);
      if (!l) this.lanes.set(job.endpointId, (l = { retry: new Set(), normal: new Set(), low: new Set() }));
      const lane = job.policy.lowPriority ? l.low : front ? l.retry : l.normal;
      if (sign > 0) lane.add(job.id);
      else for (const x of [l.retry, l.normal, l.low]) x.delete(job.id);
    }
  }
}

function deadlineOf(job: Job, kind: DeadlineKind): number | undefined {
  switch (kind) {
    case 'ttl':
      return job.status === 'IN_QUEUE' ? job.expiresAt : undefined;
    case 'lease':
      return job.status === 'IN_PROGRESS' ? job.leaseExpiresAt : undefined;
    case 'exec':
      return job.status === 'IN_PROGRESS' ? job.startedAt! + job.policy.executionTimeout : undefined;
    case 'expire':
      return isFinal(job.status) ? job.expiresAt : undefined;
  }
}

/** fields a transition ends are set to undefined, never deleted: a `delete` would cost the record its shape */
function clear(o: JobRecord, keys: (keyof JobRecord)[]): void {
  for (const k of keys) o[k] = undefined as never;
}

/** a Job with every field present (absent ones undefined); the compiler holds it to the whole list */
type JobRecord = { -readonly [K in keyof Required<Job>]: K extends OptionalKey ? Job[K] | undefined : Job[K] };
type OptionalKey = { [K in keyof Job]-?: {} extends Pick<Job, K> ? K : never }[keyof Job];

/** the fields of a job that change as it moves through the queue */
type JobState = Omit<Job, keyof SubmittedJob>;

/**
 * A job with every field of Job present, in one order: the fields fixed at submission from `j`, the
 * rest from `state` (a copy is `jobRecord(job, job)`). Every record of the table then has one hidden
 * class: V8 keeps them fast objects, so the copy of each transition, its freeze and the reads of the
 * queue's hot path stay cheap (a record with a deleted field, or one of many shapes, is not).
 */
function jobRecord(j: SubmittedJob, state: JobState): JobRecord {
  return {
    id: j.id, endpointId: j.endpointId, accountId: j.accountId, input: j.input, webhook: j.webhook, s3Config: j.s3Config,
    policy: j.policy, sync: j.sync, createdAt: j.createdAt, status: state.status, queuedAt: state.queuedAt,
    startedAt: state.startedAt, finishedAt: state.finishedAt, workerId: state.workerId, leaseExpiresAt: state.leaseExpiresAt,
    delayTime: state.delayTime, executionTime: state.executionTime, output: state.output, error: state.error,
    retries: state.retries, autoRetries: state.autoRetries, expiresAt: state.expiresAt,
  };
}
