// Template pins (docs/templates.md, "Public templates and pinning"): an endpoint that runs another
// account's public template copies the template's worker fields when it chooses it, and its workers
// are built from that copy. The template's owner editing it then changes nothing of theirs (was: every
// endpoint on the template, in any account, rolled to the owner's new image and command, with its own
// env secrets and worker token). The endpoint's account takes the template as it is now by naming
// `templateId` again (PATCH /v1/endpoints/{id}, POST /v1/endpoints/{id}/update, PATCH
// /v2/serverless/{id}, GraphQL saveEndpoint or updateEndpointTemplate). The account's own templates
// are never pinned: they roll live.
import type { EndpointRecord, TemplatePin, TemplateRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';

/** Template fields a serverless worker is built from (serverless/worker-record.ts); a pin holds these. */
export const TEMPLATE_WORKER_FIELDS = ['image', 'args', 'disk', 'ports', 'env', 'registry', 'allowedCudaVersions'] as const;

/** What a worker is built from: the template's worker fields and its id. */
export type WorkerTemplate = Pick<TemplateRecord, 'id' | (typeof TEMPLATE_WORKER_FIELDS)[number]>;

/** the pin an endpoint of `accountId` takes of `t` now: null for the account's own template */
export function pinOf(t: TemplateRecord, accountId: string, now: string): TemplatePin | null {
  if (t.accountId === accountId) return null;
  return {
    image: t.image,
    args: t.args,
    disk: t.disk,
    ports: [...t.ports],
    env: { ...t.env },
    registry: t.registry,
    allowedCudaVersions: [...t.allowedCudaVersions],
    templateUpdatedAt: t.updatedAt,
    pinnedAt: now,
  };
}

/**
 * The pin after the endpoint's account chose `t` again: the current one when the template has not
 * changed since (so a re-save with nothing new does not roll the workers), else a fresh one.
 */
export function repin(cur: TemplatePin | null | undefined, curTemplateId: string, t: TemplateRecord, accountId: string, now: string): TemplatePin | null {
  const fresh = pinOf(t, accountId, now);
  if (fresh && cur && curTemplateId === t.id && cur.templateUpdatedAt === t.updatedAt) return cur;
  return fresh;
}

/** what the endpoint's workers are built from: its pin, else its (own) template; undefined when neither is readable */
export function workerTemplate(e: EndpointRecord, t: TemplateRecord | undefined): WorkerTemplate | undefined {
  if (e.templatePin) {
    const { templateUpdatedAt: _u, pinnedAt: _p, ...fields } = e.templatePin;
    return { id: e.templateId, ...fields };
  }
  if (!t || (t.accountId !== e.accountId && !t.public)) return undefined;
  return t;
}

/**
 * The upgrade of records written before pins existed (run at start, on every replica: it writes only
 * endpoints without `templatePin`): another account's endpoint on a public template is pinned to the
 * template as it is now; every other endpoint gets `null` (live). Answers how many were pinned.
 */
export async function pinEndpointsOfOthers(store: Store): Promise<number> {
  const todo = (await store.list('endpoints')).filter((e) => e.templatePin === undefined);
  if (todo.length === 0) return 0;
  return store.transact(async (tx) => {
    const now = new Date().toISOString();
    let pinned = 0;
    for (const old of todo) {
      const e = await tx.get('endpoints', old.id);
      if (!e || e.templatePin !== undefined) continue;
      const t = await tx.get('templates', e.templateId);
      const pin = t ? pinOf(t, e.accountId, now) : null;
      if (pin) pinned++;
      // the pin is what the workers already run: the version (and so the workers) stays
      tx.put('endpoints', { ...e, templatePin: pin });
    }
    return pinned;
  });
}
