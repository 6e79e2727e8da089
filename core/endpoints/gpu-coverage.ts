// Which of an endpoint's GPU types no enrolled host has (docs/serverless.md#gpu-types-no-host-has).
// Infrastructure code may declare an endpoint before its hosts are enrolled, so such an endpoint is
// accepted, with a warning in the answer; until a host with one of its types is enrolled its workers
// are THROTTLED with this reason, and `runsync` answers at once with it instead of waiting its time out.
import type { EndpointRecord } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';

/** The types of `typeIds` that no enrolled host (drained ones included) has a GPU of. */
export async function gpuTypesNoHostHas(store: StoreReader, typeIds: readonly string[]): Promise<string[]> {
  if (!typeIds.length) return [];
  const offered = new Set<string>();
  for (const h of await store.list('hosts')) for (const g of h.facts.gpus) if (g.typeId) offered.add(g.typeId);
  return typeIds.filter((t) => !offered.has(t));
}

/** Why the endpoint can have no worker at all: none of its GPU types is on an enrolled host; else null. */
export async function noHostReason(store: StoreReader, e: Pick<EndpointRecord, 'gpuTypeIds'>): Promise<string | null> {
  const missing = await gpuTypesNoHostHas(store, e.gpuTypeIds);
  return missing.length && missing.length === e.gpuTypeIds.length ? `no enrolled host has ${missing.join(' or ')}` : null;
}

/** The warnings of a create or update answer: each GPU type no enrolled host has. */
export async function gpuTypeWarnings(store: StoreReader, e: Pick<EndpointRecord, 'gpuTypeIds'>): Promise<string[]> {
  const missing = await gpuTypesNoHostHas(store, e.gpuTypeIds);
  const all = missing.length === e.gpuTypeIds.length;
  return missing.map((t) => `no enrolled host has ${t}: ${all ? 'no worker can start until one is enrolled (its jobs wait, THROTTLED)' : 'workers use the endpoint\'s other GPU types'}`);
}
