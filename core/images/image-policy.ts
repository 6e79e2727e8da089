// The registries a tenant's image may name, applied where an image enters: a pod's or a template's
// `image` (endpoints run templates), by every interface (REST v2 and v1, GraphQL, the constructs).
// The rule is model/rules/image-registry.ts; names are resolved again before each pull (provisioner/).
import { fail422, imageRegistry, imageRegistryRefusal } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import { pullRefusal, type RegistryLookup } from './registry-lookup.ts';

/** 422 naming `$.image` when the image's registry is one a tenant may not name. */
export function checkImageRegistry(image: string | undefined, allowed: readonly string[], what: string): void {
  if (image === undefined) return;
  const why = imageRegistryRefusal(image, allowed);
  if (why !== null) fail422(what, [`$.image: ${why}`]);
}

export interface RefusedRegistryInUse {
  /** `host[:port]` */
  registry: string;
  why: string;
  /** `pod <id>`, `template <id>`, `endpoint <id> (template <id>)`: what names it */
  usedBy: string[];
}

/**
 * Registries named by stored pods (not terminated), templates and endpoints that the rule refuses,
 * names resolved as before a pull (`resolve`; none: the text rule only): what the control plane logs
 * at start after an upgrade, so the operator can allow those it trusts. Their pods' next pull is
 * refused; containers already there run on.
 */
export async function refusedRegistriesInUse(store: StoreReader, allowed: readonly string[], resolve?: RegistryLookup): Promise<RefusedRegistryInUse[]> {
  const [pods, templates, endpoints] = await Promise.all([store.list('pods'), store.list('templates'), store.list('endpoints')]);
  const users = new Map<string, string[]>();
  const note = (image: string, user: string): void => {
    const reg = imageRegistry(image);
    if (reg === null || allowed.includes(reg.server)) return;
    users.set(reg.server, [...(users.get(reg.server) ?? []), user]);
  };
  for (const p of pods) if (p.status !== 'TERMINATED') note(p.image, p.endpointId === undefined ? `pod ${p.id}` : `worker ${p.id} of endpoint ${p.endpointId}`);
  const imageOf = new Map(templates.map((t) => [t.id, t.image]));
  for (const t of templates) note(t.image, `template ${t.id}`);
  for (const e of endpoints) {
    const image = imageOf.get(e.templateId);
    if (image !== undefined) note(image, `endpoint ${e.id} (template ${e.templateId})`);
  }
  const judged = await Promise.all(
    [...users].map(async ([registry, usedBy]) => {
      const probe = `${registry}/x`;
      const why = resolve ? await pullRefusal(probe, allowed, resolve) : imageRegistryRefusal(probe, allowed);
      return why === null ? null : { registry, why, usedBy };
    }),
  );
  return judged.filter((r): r is RefusedRegistryInUse => r !== null).sort((a, b) => (a.registry < b.registry ? -1 : 1));
}
