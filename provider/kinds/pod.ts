// Pods: /v2/pods. In place: what PATCH takes (podUpdateSchema), the GPU count included (a resize the
// server plans and applies in one commit, keeping the pod). Replaced: GPU type, CPU flavor, cloud,
// template, data centers, the mount kind and a network mount's volumeId (immutable).
import { gpuConfigSchema, podUpdateSchema } from '../../model/index.ts';
import { sameJson } from '../contract/spec-codec.ts';
import {
  diffFields,
  getOrNull,
  isObject,
  listRoute,
  patchBody,
  toLive,
  type FieldChange,
  type KindHandler,
  type LiveResource,
} from './kind.ts';

// `gpu` as a whole is not: only its count is (below), the type is the pod's for life
const UPDATABLE = Object.keys(podUpdateSchema.properties).filter((f) => f !== 'gpu');
/** the one struct field PATCH changes in place: a resize (docs/pods.md#resizing-in-place) */
const RESIZE = 'gpu.count';
const DEFAULT_GPU_COUNT = gpuConfigSchema.properties.count.default;
/** statuses `start` brings back; a stack declares running pods */
const STOPPED = ['EXITED', 'ERROR'];
// compared by their own rules below; env of a template pod is the template's env under the spec's
const SKIP = ['mounts', 'dataCenterIds'];
const SKIP_WITH_TEMPLATE = [...SKIP, 'env'];
const STRUCTS = ['gpu', 'cpu'];

type Mounts = { persistent?: { size: number; path: string }; network?: { volumeId: string; path: string }[] };

function mountKind(m: Mounts | undefined): string {
  return m?.persistent ? 'persistent' : m?.network?.length ? 'network' : 'none';
}

function diffMounts(want: Mounts, have: Mounts): FieldChange[] {
  if (mountKind(want) !== mountKind(have))
    return [{ field: 'mounts', from: have, to: want, forcesReplacement: true }];
  const out: FieldChange[] = [];
  if (want.persistent && have.persistent && !sameJson(want.persistent, have.persistent))
    out.push({ field: 'mounts.persistent', from: have.persistent, to: want.persistent, forcesReplacement: false });
  const w = want.network?.[0];
  const h = have.network?.[0];
  if (w && h) {
    if (w.volumeId !== h.volumeId)
      out.push({ field: 'mounts.network[0].volumeId', from: h.volumeId, to: w.volumeId, forcesReplacement: true });
    if (w.path !== h.path) out.push({ field: 'mounts.network[0].path', from: h.path, to: w.path, forcesReplacement: false });
  }
  return out;
}

/** where the pod view keeps a create field whose name differs */
function podLiveValue(field: string, view: Record<string, unknown>): unknown {
  if (field === 'templateId') return view.template;
  if (field === 'globalNetworking') return (view.globalNetworking as { enabled?: boolean } | undefined)?.enabled;
  return view[field];
}

function diffPod(desired: Record<string, unknown>, live: LiveResource): FieldChange[] {
  const v = live.view;
  const gpu = desired.gpu as { count?: number } | undefined;
  const want = gpu && gpu.count === undefined ? { ...desired, gpu: { ...gpu, count: DEFAULT_GPU_COUNT } } : desired;
  const fromTemplate = desired.templateId !== undefined;
  const changes = diffFields(want, live, {
    updatable: UPDATABLE,
    structs: STRUCTS,
    skip: fromTemplate ? SKIP_WITH_TEMPLATE : SKIP,
    liveValue: podLiveValue,
  }).map((c) => (c.field === RESIZE ? { ...c, forcesReplacement: false } : c));
  if (fromTemplate && isObject(desired.env)) {
    const have = (v.env ?? {}) as Record<string, string>;
    const missing = Object.entries(desired.env).filter(([k, val]) => have[k] !== val);
    if (missing.length) changes.push({ field: 'env', from: have, to: { ...have, ...desired.env }, forcesReplacement: false });
  }
  if (desired.mounts !== undefined) changes.push(...diffMounts(desired.mounts as Mounts, (v.mounts ?? {}) as Mounts));
  const dcs = desired.dataCenterIds as string[] | undefined;
  if (dcs?.length && typeof v.dataCenterId === 'string' && !dcs.includes(v.dataCenterId))
    changes.push({ field: 'dataCenterIds', from: [v.dataCenterId], to: dcs, forcesReplacement: true });
  if (STOPPED.includes(String(v.status)))
    changes.push({ field: 'status', from: v.status, to: 'RUNNING', forcesReplacement: false });
  return changes;
}

export const podKind: KindHandler = {
  kind: 'pod',
  label: 'pod',
  deleteRank: 0,
  uniqueNames: true,
  holdsData: (live) => Boolean((live.view.mounts as Mounts | undefined)?.persistent),
  list: (api) => listRoute(api, '/v2/pods'),
  get: async (api, id) => {
    const live = await getOrNull(api, `/v2/pods/${encodeURIComponent(id)}`);
    return live && live.view.status !== 'TERMINATED' ? live : null;
  },
  diff: diffPod,
  create: async (api, body) => toLive(await api.post<Record<string, unknown>>('/v2/pods', body)),
  async update(api, live, desired, changes, tags) {
    const inPlace = changes.filter((c) => c.field !== 'status');
    if (inPlace.length) {
      const body = patchBody(desired, inPlace, tags);
      const env = inPlace.find((c) => c.field === 'env');
      if (env) body.env = env.to;
      const resize = inPlace.find((c) => c.field === RESIZE);
      if (resize) body.gpu = { count: resize.to };
      // only a mount's path can change in place; the PATCH names the mount it already has
      const have = (live.view.mounts ?? {}) as Mounts;
      const want = desired.mounts as Mounts | undefined;
      if (body.mounts !== undefined && want)
        body.mounts = want.network && have.network?.[0]
          ? { network: [{ volumeId: have.network[0].volumeId, path: want.network[0]!.path }] }
          : { persistent: want.persistent };
      await api.patch(`/v2/pods/${encodeURIComponent(live.id)}`, body);
    }
    if (changes.some((c) => c.field === 'status')) await api.post(`/v2/pods/${encodeURIComponent(live.id)}/action`, { action: 'start' });
  },
  delete: (api, id) => api.delete(`/v2/pods/${encodeURIComponent(id)}`),
  setTags: async (api, id, tags) => {
    await api.patch(`/v2/pods/${encodeURIComponent(id)}`, { tags });
  },
};
