// Network volumes, templates and serverless endpoints: the model's update schemas say what changes
// in place; the rest of each create schema forces a replacement.
import { endpointUpdateSchema } from '../../model/index.ts';
import { networkVolumeUpdateSchema } from '../../model/index.ts';
import { templateUpdateSchema } from '../../model/index.ts';
import type { ApiClient } from '../../client/index.ts';
import { diffFields, getOrNull, listRoute, patchBody, toLive, type KindHandler } from './kind.ts';

function crud(base: string): Pick<KindHandler, 'list' | 'get' | 'create' | 'delete' | 'setTags'> & {
  patch(api: ApiClient, id: string, body: Record<string, unknown>): Promise<void>;
} {
  const one = (id: string) => `${base}/${encodeURIComponent(id)}`;
  return {
    list: (api) => listRoute(api, base),
    get: (api, id) => getOrNull(api, one(id)),
    create: async (api, body) => toLive(await api.post<Record<string, unknown>>(base, body)),
    delete: (api, id) => api.delete(one(id)),
    patch: async (api, id, body) => {
      await api.patch(one(id), body);
    },
    setTags: async (api, id, tags) => {
      await api.patch(one(id), { tags });
    },
  };
}

const volumes = crud('/v2/network-volumes');
const VOLUME_UPDATABLE = Object.keys(networkVolumeUpdateSchema.properties);

export const networkVolumeKind: KindHandler = {
  kind: 'network-volume',
  label: 'network volume',
  deleteRank: 2,
  uniqueNames: false,
  holdsData: () => true,
  ...volumes,
  diff(desired, live) {
    return diffFields(desired, live, { updatable: VOLUME_UPDATABLE }).map((c) =>
      // a volume grows in place; shrinking could cut off data, so only a new volume can be smaller
      c.field === 'size' && typeof c.to === 'number' && typeof c.from === 'number' && c.to < c.from
        ? { ...c, forcesReplacement: true }
        : c,
    );
  },
  update: (api, live, desired, changes, tags) => volumes.patch(api, live.id, patchBody(desired, changes, tags)),
};

const templates = crud('/v2/templates');
const TEMPLATE_UPDATABLE = Object.keys(templateUpdateSchema.properties);

export const templateKind: KindHandler = {
  kind: 'template',
  label: 'template',
  deleteRank: 1,
  uniqueNames: true,
  holdsData: () => false,
  ...templates,
  diff: (desired, live) => diffFields(desired, live, { updatable: TEMPLATE_UPDATABLE }),
  update: (api, live, desired, changes, tags) => templates.patch(api, live.id, patchBody(desired, changes, tags)),
};

const endpoints = crud('/v1/endpoints');
const ENDPOINT_UPDATABLE = Object.keys(endpointUpdateSchema.properties);

export const endpointKind: KindHandler = {
  kind: 'endpoint',
  label: 'serverless endpoint',
  deleteRank: 0,
  uniqueNames: false,
  holdsData: () => false,
  ...endpoints,
  // the view echoes gpuTypeIds as sent (pool ids stay pool ids), so they compare as declared
  diff: (desired, live) => diffFields(desired, live, { updatable: ENDPOINT_UPDATABLE }),
  update: (api, live, desired, changes, tags) => endpoints.patch(api, live.id, patchBody(desired, changes, tags)),
};
