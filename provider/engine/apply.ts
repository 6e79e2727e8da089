// Carries a plan out through the API: deletions that free names first, then creations and updates in
// dependency order (each reference resolved to the id that now exists), then the deletions that had to
// wait for users to move off, then (unless told not to) waiting until the stack's pods are RUNNING.
import type { ApiClient } from '../../client/index.ts';
import { ApiError } from '../../client/index.ts';
import { KINDS } from '../kinds/index.ts';
import { mentions } from '../kinds/kind.ts';
import { ownerTags, userTags } from '../contract/ownership.ts';
import { mapRefs } from '../contract/spec-codec.ts';
import type { Plan, PlannedChange } from './plan.ts';
import type { Reporter } from './reporter.ts';
import { waitForPods, type PodNotRunning } from './wait.ts';

export interface ApplyOptions {
  api: ApiClient;
  reporter: Reporter;
  /** wait for created and changed pods to be RUNNING (default true) */
  wait?: boolean;
  waitTimeoutMs?: number;
  pollMs?: number;
  /** API calls in flight at once within one dependency level */
  concurrency?: number;
}

export interface ApplyResult {
  ok: boolean;
  errors: string[];
  notRunning: PodNotRunning[];
  /** construct path → id after the apply */
  ids: Record<string, string>;
}

const VERB = { create: ['Creating', 'Created'], update: ['Modifying', 'Modified'], replace: ['Replacing', 'Replaced'] } as const;

export async function applyPlan(plan: Plan, opts: ApplyOptions): Promise<ApplyResult> {
  const { api, reporter } = opts;
  const limit = opts.concurrency ?? 8;
  const errors: string[] = [];
  const ids = new Map<string, string>(Object.entries(plan.knownIds));
  const failed = new Set<string>();

  // 1. deletions that nothing left in the stack refers to, and the old halves of replacements whose
  //    names must be free again (pods); users of a resource go before it (rank: pods/endpoints,
  //    templates, volumes)
  // a replacement the API's dry run refused is not started: the old pod stays as it is (placement-check.ts)
  const unplaceable = new Set(plan.changes.filter((c) => c.action === 'replace' && c.placement?.placeable === false));
  for (const c of unplaceable)
    if (c.placement?.placeable === false) {
      failed.add(c.desired!.address);
      errors.push(`${c.address}: not replaced, the new pod cannot be placed (${c.placement.code}: ${c.placement.detail}); the old pod [id=${c.id}] is kept as it was`);
    }
  const doomed = plan.changes.filter((c) => (c.action === 'delete' || c.action === 'replace') && !unplaceable.has(c));
  const staying = plan.changes.filter((c) => c.live && (c.action === 'update' || c.action === 'no-op')).map((c) => c.live!.view);
  const deferred = (c: PlannedChange) =>
    (c.action === 'replace' && !KINDS[c.kind].uniqueNames) || staying.some((v) => mentions(v, c.id!));
  const destroy = async (changes: PlannedChange[]) => {
    for (const rank of [...new Set(changes.map((c) => KINDS[c.kind].deleteRank))].sort()) {
      await runLimited(changes.filter((c) => KINDS[c.kind].deleteRank === rank), limit, async (c) => {
        const step = reporter.step(`${c.address}: destroying ${c.id}…`);
        try {
          await KINDS[c.kind].delete(api, c.id!);
          step.done(`${c.address}: destroyed ${c.id}`);
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) return step.done(`${c.address}: ${c.id} was already gone`);
          step.fail(`${c.address}: destroy failed: ${message(e)}`);
          errors.push(`${c.address}: ${message(e)}`);
          if (c.desired && c.action === 'replace' && KINDS[c.kind].uniqueNames) failed.add(c.desired.address);
        }
      });
    }
  };
  await destroy(doomed.filter((c) => !deferred(c)));

  // 2. create and update, level by level so each level's references are known
  const upserts = plan.changes.filter((c) => c.desired && c.action !== 'delete');
  const touchedPods: string[] = [];
  for (const level of levels(upserts)) {
    await runLimited(level, limit, async (c) => {
      const d = c.desired!;
      const blocked = d.refs.filter((r) => failed.has(r) || !ids.has(r));
      if (blocked.length) {
        failed.add(d.address);
        if (c.action !== 'no-op') errors.push(`${c.address}: skipped, it depends on ${blocked.join(', ')}, which failed`);
        return;
      }
      if (c.action === 'no-op' || c.action === 'delete' || unplaceable.has(c)) return;
      const resolved = mapRefs(d.spec, (a) => ids.get(a)) as Record<string, unknown>;
      const tags = { ...userTags(resolved.tags as Record<string, string> | undefined), ...ownerTags(plan.stack, c.path) };
      const [doing, did] = VERB[c.action];
      const step = reporter.step(`${c.address}: ${doing.toLowerCase()}…`);
      const started = Date.now();
      try {
        const handler = KINDS[c.kind];
        let id = c.id!;
        if (c.action === 'update') {
          // re-diff: references that were unknown at plan time are known now
          await handler.update(api, c.live!, resolved, handler.diff(resolved, c.live!), tags);
        } else id = (await handler.create(api, { ...resolved, tags })).id;
        ids.set(d.address, id);
        if (c.kind === 'pod') touchedPods.push(id);
        step.done(`${c.address}: ${did.toLowerCase()} [id=${id}] (${((Date.now() - started) / 1000).toFixed(1)}s)`);
      } catch (e) {
        failed.add(d.address);
        step.fail(`${c.address}: ${doing.toLowerCase()} failed: ${message(e)}`);
        errors.push(`${c.address}: ${message(e)}`);
      }
    });
  }

  // 3. what had to outlive the updates: a replaced volume (created anew above, its users moved over)
  //    and resources that a staying resource referred to until it was updated
  // (an old volume stays when its replacement could not be created)
  await destroy(doomed.filter((c) => deferred(c) && !(c.action === 'replace' && failed.has(c.desired!.address))));

  let notRunning: PodNotRunning[] = [];
  if (opts.wait !== false && touchedPods.length)
    notRunning = await waitForPods(api, touchedPods, reporter, { timeoutMs: opts.waitTimeoutMs ?? 600_000, pollMs: opts.pollMs ?? 2000 });
  const byPath: Record<string, string> = {};
  for (const c of plan.changes) if (c.desired && ids.has(c.desired.address)) byPath[c.path] = ids.get(c.desired.address)!;
  return { ok: errors.length === 0 && notRunning.length === 0, errors, notRunning, ids: byPath };
}

/** Groups changes so that every reference points into an earlier group. */
function levels(changes: PlannedChange[]): PlannedChange[][] {
  const depth = new Map<string, number>();
  const out: PlannedChange[][] = [];
  for (const c of changes) {
    // changes come in dependency order (plan.ts), so each reference's depth is already known
    const d = Math.max(-1, ...c.desired!.refs.map((r) => depth.get(r) ?? -1)) + 1;
    depth.set(c.desired!.address, d);
    (out[d] ??= []).push(c);
  }
  return out.filter(Boolean);
}

export async function runLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
