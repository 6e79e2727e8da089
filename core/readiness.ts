// What GET /readyz answers: every registered check, each bounded in time, so a wedged component
// makes the probe say so rather than hang. A check answers null when ready, or why not.
import type { Store } from '../store/index.ts';
import type { JobQueue } from './jobs/index.ts';

export type ReadinessCheck = () => Promise<string | null> | string | null;

export interface ReadinessReport {
  ready: boolean;
  /** check name → "ok", or why it is not ready */
  checks: Record<string, string>;
}

export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(private readonly timeoutMs = READINESS_CHECK_TIMEOUT_MS) {}

  /** Adds or replaces the check called `name`. */
  set(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async report(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]): Promise<[string, string]> => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`no answer within ${this.timeoutMs} ms`), this.timeoutMs);
        });
        try {
          const why = await Promise.race([Promise.resolve().then(check), late]);
          return [name, why ?? 'ok'];
        } catch (e) {
          return [name, `check failed: ${e instanceof Error ? e.message : String(e)}`];
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    return { ready: entries.every(([, v]) => v === 'ok'), checks };
  }
}

/**
 * The store is writable: it reports no write blocker (closed, a failed journal write) and a
 * transaction gets its turn, i.e. no write holds the store's lock. A failed write (a full disk) blocks
 * until a write succeeds again; while it does, the check makes a probe write (Store.probeWrite) to
 * learn whether space is back. A store that writes fine is probed with no write: no journal line.
 * PostgreSQL: a write the server refused because it cannot write (a full disk, an I/O error,
 * read-only) blocks the same way; its probe creates a table and rolls it back (store/pg/write-probe.ts).
 */
export function storeReadiness(store: Store): ReadinessCheck {
  return async () => {
    let blocked = store.writeBlocker?.() ?? null;
    if (blocked && store.probeWrite) {
      await store.probeWrite().catch(() => undefined);
      blocked = store.writeBlocker?.() ?? null;
    }
    if (blocked) return blocked;
    await store.transact(() => undefined);
    return null;
  };
}

/**
 * The job queue can make changes durable: it reports no write blocker (closed, or its last log write
 * failed and none succeeded since; the embedded queue retries on its own once a second; the
 * PostgreSQL queue's database unreachable, or it refused a write because it cannot write). While it
 * reports one and has `probeWrite` (the PostgreSQL queue), the check makes that probe write first, to
 * learn whether the database takes writes again. A queue without `writeBlocker` is taken as ready.
 */
export function queueReadiness(queue: Pick<JobQueue, 'writeBlocker'> & { probeWrite?(): Promise<void> }): ReadinessCheck {
  return async () => {
    let blocked = queue.writeBlocker?.() ?? null;
    if (blocked && queue.probeWrite) {
      await queue.probeWrite().catch(() => undefined);
      blocked = queue.writeBlocker?.() ?? null;
    }
    return blocked;
  };
}
