// What a committed change of the PostgreSQL queue sets off: parked callers to wake (here and, by a
// NOTIFY sent right after the commit, on every other replica) and, on this replica only, the
// onFinal and onRecycle listeners (a change is told once, where it was made, like the embedded queue).
import type { Job } from '../../../model/index.ts';
import type { RecycleEvent } from '../job-queue.ts';

/** wake-ups, by what they name; the only part of an effect that crosses replicas */
export interface Wakes {
  /** endpoints that got a queued job: a waiting take checks again */
  ready: string[];
  /** jobs that became final: final waiters and stream readers check again */
  final: string[];
  /** jobs that got a stream chunk */
  chunk: string[];
  /** workers with new job-stop requests */
  stop: string[];
  /** workers lost: their parked takes and job-stop polls answer nothing */
  lost: string[];
  /** endpoints deleted: their parked takes answer nothing */
  drop: string[];
}

export interface Effects {
  finals: Job[];
  stops: { workerId: string; jobId: string }[];
  recycles: RecycleEvent[];
  ready: Set<string>;
  chunks: Set<string>;
  lost: Set<string>;
  drops: Set<string>;
}

export function newEffects(): Effects {
  return { finals: [], stops: [], recycles: [], ready: new Set(), chunks: new Set(), lost: new Set(), drops: new Set() };
}

export function wakesOf(fx: Effects): Wakes {
  return {
    ready: [...fx.ready],
    final: fx.finals.map((j) => j.id),
    chunk: [...fx.chunks],
    stop: [...new Set(fx.stops.map((s) => s.workerId))],
    lost: [...fx.lost],
    drop: [...fx.drops],
  };
}

export function isEmpty(w: Wakes): boolean {
  return Object.values(w).every((xs: string[]) => xs.length === 0);
}

/** NOTIFY payloads are limited to 8000 bytes; past this the receivers are told to check everything */
const MAX_PAYLOAD = 7000;

export function encodeWakes(replicaId: string, w: Wakes): string {
  const full = JSON.stringify({ r: replicaId, ...w });
  return full.length <= MAX_PAYLOAD ? full : JSON.stringify({ r: replicaId, all: true });
}

/** the sender and what to wake; `all`: everything parked checks again */
export function decodeWakes(payload: string): { from: string; wakes: Wakes | 'all' } | undefined {
  try {
    const m = JSON.parse(payload) as Partial<Wakes> & { r?: unknown; all?: unknown };
    if (typeof m.r !== 'string') return undefined;
    if (m.all === true) return { from: m.r, wakes: 'all' };
    const list = (xs: unknown): string[] => (Array.isArray(xs) ? xs.filter((x): x is string => typeof x === 'string') : []);
    return { from: m.r, wakes: { ready: list(m.ready), final: list(m.final), chunk: list(m.chunk), stop: list(m.stop), lost: list(m.lost), drop: list(m.drop) } };
  } catch {
    return undefined;
  }
}
