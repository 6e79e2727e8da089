// The plan asks the API where each new, replaced or resized pod would go (`POST /v2/pods?dryRun=true`,
// docs/declarative.md#placement-in-the-plan): the answer is the host it would take, or the refusal a
// create would get. A replacement that cannot be placed is never started: apply keeps the old pod.
import type { ApiClient } from '../../client/index.ts';
import { ApiError } from '../../client/index.ts';
import { ownerTags, userTags } from '../contract/ownership.ts';
import { mentions } from '../kinds/kind.ts';
import { UNKNOWN } from '../kinds/index.ts';
import type { Plan, PlacementCheck, PlannedChange } from './plan.ts';


/** pods the dry run is asked about: created, replaced, or resized in place (a gpu.count change) */
function asked(c: PlannedChange): boolean {
  if (c.kind !== 'pod' || !c.desired) return false;
  return c.action === 'create' || c.action === 'replace' || (c.action === 'update' && c.changes.some((f) => f.field === 'gpu.count'));
}

/** Annotates the plan's pod changes with their placement; at most `limit` dry runs in flight. */
export async function checkPlacements(api: ApiClient, plan: Plan, limit = 8): Promise<void> {
  const todo = plan.changes.filter(asked);
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const c = todo[next++]!;
      c.placement = await dryRun(api, plan.stack, c);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, todo.length) }, worker));
}

async function dryRun(api: ApiClient, stack: string, c: PlannedChange): Promise<PlacementCheck> {
  const spec = resolvedSpec(c);
  if (mentions(spec, UNKNOWN)) return { placeable: null, why: 'it refers to a resource created by this apply; placed when that exists' };
  const body = { ...spec, tags: { ...userTags(spec.tags as Record<string, string> | undefined), ...ownerTags(stack, c.path) } };
  const replaces = c.action === 'create' ? '' : `&replaces=${encodeURIComponent(c.id!)}`;
  try {
    const a = await api.post<{ machineId: string; dataCenterId: string; costPerHr: number }>(`/v2/pods?dryRun=true${replaces}`, body);
    return { placeable: true, machineId: a.machineId, dataCenterId: a.dataCenterId, costPerHr: a.costPerHr };
  } catch (e) {
    // only the create's own refusals are the pod's answer; a fault of the call itself is the plan's error
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 403 && e.status !== 429)
      return { placeable: false, code: e.code, detail: e.message };
    throw e;
  }
}

/** the desired spec with the references the plan already knows resolved (the rest stay UNKNOWN) */
function resolvedSpec(c: PlannedChange): Record<string, unknown> {
  return c.resolved ?? c.desired!.spec;
}

/** The line the plan prints under a checked pod. */
export function placementLine(p: PlacementCheck): string {
  if (p.placeable === true) return `placement: would run on host ${p.machineId} (${p.dataCenterId}), $${p.costPerHr}/hr`;
  if (p.placeable === false) return `placement: REFUSED (${p.code}): ${p.detail}`;
  return `placement: known after apply (${p.why})`;
}
