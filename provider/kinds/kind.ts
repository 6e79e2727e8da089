// What the engine needs to know about each kind of resource: where it lives in the API, how its live
// record compares with a desired spec (which differences PATCH can fix, which force a replacement),
// and whether deleting it loses data.
import type { ApiClient } from '../../client/index.ts';
import { ApiError } from '../../client/index.ts';
import type { ResourceKind } from '../contract/triggers.ts';
import { sameJson } from '../contract/spec-codec.ts';
import { userTags } from '../contract/ownership.ts';

/** A value the plan cannot know until an earlier step of the apply has run (a new resource's id). */
export const UNKNOWN = '(known after apply)';

export interface LiveResource {
  id: string;
  name: string;
  tags: Record<string, string>;
  /** the API's view of the resource, as returned */
  view: Record<string, unknown>;
}

export interface FieldChange {
  /** JSONPath-like field name without `$.`: `gpu.id`, `mounts.network[0].volumeId` */
  field: string;
  from: unknown;
  to: unknown;
  forcesReplacement: boolean;
}

export interface KindHandler {
  kind: ResourceKind;
  /** words for messages: "pod", "network volume" */
  label: string;
  /** users of a resource are deleted before it: pods and endpoints (0), templates (1), volumes (2) */
  deleteRank: number;
  /**
   * the API refuses a second resource of this name in an account (409 CONFLICT): a replacement must
   * delete the old one first; other kinds create the new one first, so users can move over to it
   */
  uniqueNames: boolean;
  /** deleting it loses data the stack cannot recreate */
  holdsData(live: LiveResource): boolean;
  list(api: ApiClient): Promise<LiveResource[]>;
  get(api: ApiClient, id: string): Promise<LiveResource | null>;
  diff(desired: Record<string, unknown>, live: LiveResource): FieldChange[];
  create(api: ApiClient, body: Record<string, unknown>): Promise<LiveResource>;
  /** applies the in-place changes of a plan (never called with a replacement) */
  update(api: ApiClient, live: LiveResource, desired: Record<string, unknown>, changes: FieldChange[], tags: Record<string, string>): Promise<void>;
  delete(api: ApiClient, id: string): Promise<void>;
  setTags(api: ApiClient, id: string, tags: Record<string, string>): Promise<void>;
}

/** The one list the answer holds: v2 wraps lists (`{"pods": [...]}`), v1 answers bare arrays. */
export function listOf(answer: unknown): Record<string, unknown>[] {
  if (Array.isArray(answer)) return answer as Record<string, unknown>[];
  const arr = Object.values((answer ?? {}) as Record<string, unknown>).find(Array.isArray);
  return (arr ?? []) as Record<string, unknown>[];
}

export function toLive(view: Record<string, unknown>): LiveResource {
  return {
    id: String(view.id),
    name: typeof view.name === 'string' ? view.name : '',
    tags: (view.tags ?? {}) as Record<string, string>,
    view,
  };
}

/** GET that answers null for 404 (deleted outside the stack). */
export async function getOrNull(api: ApiClient, path: string): Promise<LiveResource | null> {
  try {
    return toLive(await api.get<Record<string, unknown>>(path));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export interface FieldRules {
  /** fields the update (PATCH) schema takes: a difference there is fixed in place */
  updatable: readonly string[];
  /** object fields compared key by key, only on keys the live view shows (`gpu`: {id, count}) */
  structs?: readonly string[];
  /** where the live view keeps a create field, when the name differs (`templateId` → `template`) */
  liveValue?: (field: string, view: Record<string, unknown>) => unknown;
  /** fields the view never shows, or that have their own rule in the kind */
  skip?: readonly string[];
}

/**
 * Field-by-field comparison driven by the model: a field of the update schema differs in place, any
 * other field (present only in the create schema) forces a replacement, as Terraform's ForceNew.
 * Fields the spec omits are left to the server (Terraform's optional+computed).
 */
const sameName = (field: string, view: Record<string, unknown>): unknown => view[field];

export function diffFields(desired: Record<string, unknown>, live: LiveResource, rules: FieldRules): FieldChange[] {
  const out: FieldChange[] = [];
  const get = rules.liveValue ?? sameName;
  for (const [field, to] of Object.entries(desired)) {
    if (field === 'tags' || rules.skip?.includes(field) || to === undefined) continue;
    const from = get(field, live.view);
    const forcesReplacement = !rules.updatable.includes(field);
    if (rules.structs?.includes(field) && isObject(to) && isObject(from)) {
      // an unknown value never equals a live one, so sameJson alone also catches references
      for (const [k, v] of Object.entries(to))
        if (k in from && !sameJson(v, from[k]))
          out.push({ field: `${field}.${k}`, from: from[k], to: v, forcesReplacement });
    } else if (!sameJson(to, from)) out.push({ field, from, to, forcesReplacement });
  }
  const wantTags = userTags((desired.tags ?? {}) as Record<string, string>);
  const haveTags = userTags(live.tags);
  if (!sameJson(wantTags, haveTags)) out.push({ field: 'tags', from: haveTags, to: wantTags, forcesReplacement: false });
  return out;
}

/** The PATCH body for in-place changes: each changed top-level field with its desired value. */
export function patchBody(desired: Record<string, unknown>, changes: FieldChange[], tags: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const c of changes) {
    const top = /^[A-Za-z0-9_]+/.exec(c.field)?.[0] ?? c.field;
    body[top] = top === 'tags' ? tags : desired[top];
  }
  return body;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Lists a collection; a control plane without the route answers 404 ROUTE_NOT_FOUND, read as empty. */
export async function listRoute(api: ApiClient, path: string): Promise<LiveResource[]> {
  try {
    return listOf(await api.get<unknown>(path)).map(toLive);
  } catch (e) {
    if (e instanceof ApiError && e.code === 'ROUTE_NOT_FOUND') return [];
    throw e;
  }
}

/** Whether `value` holds the string `id` anywhere (a live record that still refers to a resource). */
export function mentions(value: unknown, id: string): boolean {
  if (value === id) return true;
  if (Array.isArray(value)) return value.some((v) => mentions(v, id));
  if (value && typeof value === 'object') return Object.values(value).some((v) => mentions(v, id));
  return false;
}
