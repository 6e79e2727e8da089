// The operations behind `gpufleet plan | apply | destroy`, one stack at a time: lock, read live state,
// plan, show, ask (or not), apply. The CLI parses flags and prints; tests call these directly.
import type { ApiClient } from '../../client/index.ts';
import { applyPlan, type ApplyResult } from './apply.ts';
import { readLiveState } from './live-state.ts';
import { acquireStackLock, type StackLock } from './lock.ts';
import { hasChanges, planStack, type Plan, type PlanOptions } from './plan.ts';
import { formatPlan } from './plan-format.ts';
import { checkPlacements } from './placement-check.ts';
import type { Reporter } from './reporter.ts';
import type { DesiredStack } from './synth.ts';

export interface RunOptions {
  api: ApiClient;
  reporter: Reporter;
  /** where the plan and the summary go (stdout) */
  out: (text: string) => void;
  /** asks the question and resolves true only for the answer `yes` (end of input is no); absent when nobody can answer */
  confirm?: (question: string) => Promise<boolean>;
  /** aborted (Ctrl-C, SIGTERM): apply and destroy stop where they are, release the lock and throw InterruptedError */
  signal?: AbortSignal;
  autoApprove?: boolean;
  allowDataLoss?: boolean;
  wait?: boolean;
  waitTimeoutMs?: number;
  pollMs?: number;
  /** construct paths to limit the operation to (Terraform's per-resource provisioners) */
  only?: string[];
  /** take the stack lock (default true); Terraform's provisioners run under Terraform's own lock */
  lock?: boolean;
  /** API calls in flight at once during apply (default 8) */
  concurrency?: number;
}

export class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

/** apply or destroy gave up on opts.signal (a prompt unanswered, requests in flight); the lock is released */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
}

export interface RunResult {
  plan: Plan;
  applied: ApplyResult | null;
}

export async function makePlan(stack: DesiredStack, api: ApiClient, opts: PlanOptions = {}): Promise<Plan> {
  const plan = planStack(stack, await readLiveState(api, stack), opts);
  // each new, replaced or resized pod: where it would go, or why it cannot (placement-check.ts)
  await checkPlacements(api, plan);
  return plan;
}

export async function runApply(stack: DesiredStack, opts: RunOptions): Promise<RunResult> {
  return locked(stack, opts, 'apply', () => interruptible(() => planAndApply(stack, opts, {}), opts.signal));
}

export async function runDestroy(stack: DesiredStack, opts: RunOptions): Promise<RunResult> {
  // `destroy --auto-approve` is itself the request to delete data-holding resources
  const destroyOpts = { ...opts, allowDataLoss: opts.allowDataLoss || opts.autoApprove };
  return locked(stack, opts, 'destroy', () => interruptible(() => planAndApply(stack, destroyOpts, { destroy: true }), opts.signal));
}

/** `work()`, or InterruptedError as soon as `signal` aborts (what work started may still run: the caller exits) */
function interruptible<T>(work: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work();
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new InterruptedError(`Interrupted (${String(signal.reason ?? 'aborted')}).`));
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', stop));
  });
}

async function locked<T>(stack: DesiredStack, opts: RunOptions, operation: string, fn: (lock: StackLock | null) => Promise<T>): Promise<T> {
  if (opts.lock === false) return fn(null);
  const lock = await acquireStackLock(opts.api, stack.name, operation);
  // the lease is 15 minutes; a long apply (a thousand pods, a long --wait-timeout) keeps renewing it
  const renewal = setInterval(() => void lock.renew().catch(() => {}), 5 * 60_000);
  renewal.unref();
  try {
    return await fn(lock);
  } finally {
    clearInterval(renewal);
    await lock.release().catch(() => {});
  }
}

export async function planAndApply(stack: DesiredStack, opts: RunOptions, planOpts: PlanOptions): Promise<RunResult> {
  const plan = await makePlan(stack, opts.api, { ...planOpts, ...(opts.only ? { only: opts.only } : {}) });
  opts.out(formatPlan(plan));
  if (!hasChanges(plan)) return { plan, applied: null };
  await approve(plan, opts, planOpts.destroy ? 'Destroy' : 'Apply');
  const applied = await applyPlan(plan, opts);
  const s = plan.summary;
  opts.out(
    applied.ok
      ? `\nApply complete! Resources: ${s.add} added, ${s.change} changed, ${s.destroy} destroyed.\n`
      : `\nApply finished with errors:\n  ${[...applied.errors, ...applied.notRunning.map((p) => `pod ${p.name} [id=${p.id}] is ${p.status}${p.statusReason ? ` (${p.statusReason})` : ''}`)].join('\n  ')}\n`,
  );
  return { plan, applied };
}

/** Resolves when the plan may go ahead; throws RefusedError otherwise. */
async function approve(plan: Plan, opts: RunOptions, what: 'Apply' | 'Destroy'): Promise<void> {
  const loss = plan.changes.filter((c) => c.dataLoss);
  const lossList = loss.map((c) => `  - ${c.address} [id=${c.id}] (${c.action === 'delete' ? 'destroyed' : 'replaced'})`).join('\n');
  if (opts.autoApprove) {
    if (loss.length && !opts.allowDataLoss)
      throw new RefusedError(
        `Refusing to delete data without --allow-data-loss: this plan destroys the data of\n${lossList}\n` +
          'Pass --allow-data-loss beside --auto-approve, or run without --auto-approve to confirm.',
      );
    return;
  }
  if (!opts.confirm) throw new RefusedError('No terminal to confirm the plan; pass --auto-approve.');
  const warning = loss.length ? `Warning: the data of these resources will be lost:\n${lossList}\n\n` : '';
  const ok = await opts.confirm(`${warning}Do you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: `);
  if (!ok) throw new RefusedError(`${what} cancelled.`);
}

export interface WatchOptions extends RunOptions {
  intervalMs: number;
  signal: AbortSignal;
  /** after each reconcile pass (tests count passes) */
  onCycle?: (result: RunResult | Error) => void;
}

/**
 * `apply --watch`: reconcile, sleep, repeat until aborted: drift (a pod stopped or terminated outside,
 * a field changed) is repaired at the next pass. The lock is held for the whole watch and renewed.
 */
export async function runWatch(stack: DesiredStack, opts: WatchOptions): Promise<void> {
  await locked(stack, opts, 'apply --watch', async (lock) => {
    while (!opts.signal.aborted) {
      let outcome: RunResult | Error;
      try {
        await lock?.renew();
        outcome = await planAndApply(stack, { ...opts, autoApprove: true }, {});
      } catch (e) {
        outcome = e instanceof Error ? e : new Error(String(e));
        opts.reporter.info(`reconcile failed: ${outcome.message}`);
      }
      opts.onCycle?.(outcome);
      await sleep(opts.intervalMs, opts.signal);
    }
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
