// A job queue in a fresh temporary directory, with a clock the test moves by hand and no sweep
// timer (deadlines are applied by operations and explicit `sweep()` calls).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedJobQueue, type EmbeddedJobQueueOptions } from '../../../core/jobs/index.ts';
import type { EnqueueRequest } from '../../../model/index.ts';

export const T0 = 1_700_000_000_000;

export interface QueueFixture {
  dir: string;
  q: EmbeddedJobQueue;
  /** the fake clock: read with now(), move with advance(ms) */
  now(): number;
  advance(ms: number): void;
  /** closes and opens the queue again on the same directory (a clean restart) */
  reopen(extra?: Partial<EmbeddedJobQueueOptions>): Promise<EmbeddedJobQueue>;
  cleanup(): Promise<void>;
}

export async function openFixture(extra: Partial<EmbeddedJobQueueOptions> = {}): Promise<QueueFixture> {
  const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'gpufleet-jobs-')), 'jobs');
  let t = T0;
  const opts = (more: Partial<EmbeddedJobQueueOptions>): EmbeddedJobQueueOptions => ({ dir, clock: () => t, sweepIntervalMs: 0, ...extra, ...more });
  const fx: QueueFixture = {
    dir,
    q: await EmbeddedJobQueue.open(opts({})),
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    async reopen(more = {}) {
      await fx.q.close();
      fx.q = await EmbeddedJobQueue.open(opts(more));
      return fx.q;
    },
    async cleanup() {
      await fx.q.close();
      await rm(path.dirname(dir), { recursive: true, force: true });
    },
  };
  return fx;
}

export function job(endpointId = 'ep-1', more: Partial<EnqueueRequest> = {}): EnqueueRequest {
  return { endpointId, accountId: 'acct-1', input: { prompt: 'hello' }, sync: false, ...more };
}

/** the error code a promise rejects with (fails the test if it resolves) */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `no code: ${String(e)}`;
  }
  throw new Error('expected a rejection');
}
