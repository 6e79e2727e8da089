// Waiting for pods to reach RUNNING: one list call per poll for all of them (not one GET per pod), and
// on timeout each pod's status and statusReason, which say what it is waiting for.
import type { ApiClient } from '../../client/index.ts';
import { listOf } from '../kinds/kind.ts';
import type { Reporter } from './reporter.ts';

export interface PodNotRunning {
  id: string;
  name: string;
  status: string;
  statusReason: string | null;
}

export interface WaitOptions {
  timeoutMs: number;
  pollMs: number;
}

/**
 * A change accepted but not yet in effect: the old container still runs while the new one is made
 * (docs/pods.md#changes-in-progress): the pod is RUNNING, but not yet as the stack declares it.
 */
function changePending(p: Record<string, unknown>): boolean {
  const conditions = (p.conditions ?? []) as { type?: string; reason?: string }[];
  return conditions.some((c) => c.type === 'ContainerRunning' && c.reason === 'Updating');
}

/** statuses a pod does not leave by itself: waiting longer cannot help */
const SETTLED = ['TERMINATED', 'EXITED'];

export async function waitForPods(api: ApiClient, ids: string[], reporter: Reporter, opts: WaitOptions): Promise<PodNotRunning[]> {
  const step = reporter.step(`Waiting for ${ids.length} pod(s) to be RUNNING…`);
  const deadline = Date.now() + opts.timeoutMs;
  const started = Date.now();
  for (;;) {
    const pods = new Map(listOf(await api.get<unknown>('/v2/pods?includeTerminated=true')).map((p) => [String(p.id), p]));
    const pending: PodNotRunning[] = [];
    for (const id of ids) {
      const p = pods.get(id);
      if (p?.status === 'RUNNING' && !changePending(p)) continue;
      pending.push({
        id,
        name: String(p?.name ?? ''),
        status: String(p?.status ?? 'MISSING'),
        statusReason: (p?.statusReason as string | null | undefined) ?? null,
      });
    }
    const secs = Math.round((Date.now() - started) / 1000);
    if (!pending.length) {
      step.done(`${ids.length} pod(s) RUNNING (${secs}s)`);
      return [];
    }
    if (Date.now() >= deadline || pending.every((p) => SETTLED.includes(p.status))) {
      step.fail(`${pending.length} of ${ids.length} pod(s) not RUNNING after ${secs}s`);
      for (const p of pending) reporter.info(`  pod ${p.name} [id=${p.id}]: ${p.status}${p.statusReason ? ` (${p.statusReason})` : ''}`);
      return pending;
    }
    step.update(`Waiting for pods to be RUNNING: ${ids.length - pending.length}/${ids.length} (${secs}s)`);
    await new Promise((r) => setTimeout(r, Math.min(opts.pollMs, Math.max(0, deadline - Date.now()))));
  }
}
