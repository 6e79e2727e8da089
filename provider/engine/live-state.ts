// Live state comes from the API and nowhere else: one list call per kind (all of the account's
// resources, so the plan can also see names it must not claim), plus registries for RegistryRefs.
import type { ApiClient } from '../../client/index.ts';
import { KINDS, MANAGED_KINDS } from '../kinds/index.ts';
import { listOf } from '../kinds/kind.ts';
import type { LiveState } from './plan.ts';
import type { DesiredStack } from './synth.ts';

export async function readLiveState(api: ApiClient, stack?: DesiredStack): Promise<LiveState> {
  const lists = await Promise.all(MANAGED_KINDS.map((k) => KINDS[k].list(api)));
  const byKind = Object.fromEntries(MANAGED_KINDS.map((k, i) => [k, lists[i] ?? []])) as LiveState['byKind'];
  const registries = new Map<string, string>();
  if (stack?.resources.some((r) => r.kind === 'registry-ref'))
    for (const r of listOf(await api.get<unknown>('/v2/registries'))) registries.set(String(r.name), String(r.id));
  return { byKind, registries };
}

