// The plan: desired stack vs live state (read through the API only), resource by resource: create,
// update in place, replace (naming the fields that force it), delete, or nothing. Pure: no I/O here.
import { ownerOf } from '../contract/ownership.ts';
import { KINDS, UNKNOWN, type FieldChange, type LiveResource, type ManagedKind } from '../kinds/index.ts';
import { mapRefs } from '../contract/spec-codec.ts';
import type { DesiredResource, DesiredStack } from './synth.ts';

export type Action = 'create' | 'update' | 'replace' | 'delete' | 'no-op';

/** What the API's dry run said of one pod (placement-check.ts): its host, the refusal, or why it was not asked. */
export type PlacementCheck =
  | { placeable: true; machineId: string; dataCenterId: string; costPerHr: number }
  | { placeable: false; code: string; detail: string }
  | { placeable: null; why: string };

export interface PlannedChange {
  /** `<kind>.<construct path>`, how the plan names it */
  address: string;
  kind: ManagedKind;
  path: string;
  action: Action;
  /** the live id (null for a create) */
  id: string | null;
  name: string;
  changes: FieldChange[];
  /** fields whose difference forces the replacement */
  forcedBy: string[];
  /** deleting or replacing it loses data (a network volume, a pod's persistent mount) */
  dataLoss: boolean;
  desired?: DesiredResource;
  /** the desired spec with the references known at plan time resolved (UNKNOWN for the rest) */
  resolved?: Record<string, unknown>;
  live?: LiveResource;
  /** pods: where the API's dry run says it would go (placement-check.ts); absent when not asked */
  placement?: PlacementCheck;
}

export interface Plan {
  stack: string;
  changes: PlannedChange[];
  summary: { add: number; change: number; destroy: number };
  /** address → id of what exists and stays (RegistryRef lookups, unchanged and updated resources) */
  knownIds: Record<string, string>;
}

export interface LiveState {
  byKind: Record<ManagedKind, LiveResource[]>;
  /** registry credentials by name, for RegistryRef lookups */
  registries: Map<string, string>;
}

export class PlanError extends Error {
  override readonly name = 'PlanError';
  constructor(readonly problems: string[]) {
    super(`The plan cannot be made:\n  ${problems.join('\n  ')}`);
  }
}

export function addressOf(kind: string, path: string): string {
  return `${kind}.${path}`;
}

/** Dependencies before dependents; the synth order breaks ties so plans print stably. */
export function dependencyOrder(resources: DesiredResource[]): DesiredResource[] {
  const byAddress = new Map(resources.map((r) => [r.address, r]));
  const done = new Set<string>();
  const out: DesiredResource[] = [];
  const visit = (r: DesiredResource, stack: string[]) => {
    if (done.has(r.address)) return;
    if (stack.includes(r.address)) throw new PlanError([`reference cycle: ${[...stack, r.address].join(' -> ')}`]);
    for (const ref of r.refs) {
      const dep = byAddress.get(ref);
      if (!dep) throw new PlanError([`${r.path} refers to ${ref}, which is not a gpufleet resource of this stack`]);
      visit(dep, [...stack, r.address]);
    }
    done.add(r.address);
    out.push(r);
  };
  for (const r of resources) visit(r, []);
  return out;
}

export interface PlanOptions {
  /** plan only these construct paths (the Terraform provisioners' `--resource`); nothing else is deleted */
  only?: string[];
  /** plan the deletion of everything the stack owns */
  destroy?: boolean;
}

export function planStack(stack: DesiredStack, live: LiveState, opts: PlanOptions = {}): Plan {
  const problems: string[] = [];
  const changes: PlannedChange[] = [];
  const owned = new Map<string, LiveResource[]>();
  for (const kind of Object.keys(KINDS) as ManagedKind[])
    for (const r of live.byKind[kind] ?? []) {
      const o = ownerOf(r.tags);
      if (o?.stack !== stack.name) continue;
      const key = `${kind}:${o.path}`;
      owned.set(key, [...(owned.get(key) ?? []), r]);
    }
  const inScope = (path: string) => !opts.only || opts.only.includes(path);
  const claimed = new Set<LiveResource>();
  const ids = new Map<string, string>();

  for (const d of opts.destroy ? [] : dependencyOrder(stack.resources)) {
    if (d.kind === 'registry-ref') {
      const name = String(d.spec.name);
      const id = live.registries.get(name);
      if (id) ids.set(d.address, id);
      else problems.push(`${d.path}: no registry credential named "${name}" exists (create it with POST /v2/registries)`);
      continue;
    }
    const handler = KINDS[d.kind];
    const match = owned.get(`${d.kind}:${d.path}`)?.[0];
    const resolved = d.refs.length ? (mapRefs(d.spec, (a) => ids.get(a) ?? UNKNOWN) as Record<string, unknown>) : d.spec;
    const name = String(resolved.name ?? d.path);
    const base = { address: addressOf(d.kind, d.path), kind: d.kind, path: d.path, name, desired: d, resolved };
    if (!match) {
      ids.set(d.address, UNKNOWN);
      if (handler.uniqueNames && inScope(d.path)) {
        const clash = live.byKind[d.kind].find((r) => r.name === name && ownerOf(r.tags)?.stack !== stack.name);
        if (clash) problems.push(claimProblem(handler.label, d.path, clash));
      }
      const fields = Object.entries(resolved).map(([field, to]) => ({ field, from: undefined, to, forcesReplacement: false }));
      changes.push({ ...base, action: 'create', id: null, changes: fields, forcedBy: [], dataLoss: false });
      continue;
    }
    claimed.add(match);
    const diff = handler.diff(resolved, match);
    const forcedBy: string[] = [];
    for (const c of diff) if (c.forcesReplacement) forcedBy.push(c.field);
    const action: Action = forcedBy.length ? 'replace' : diff.length ? 'update' : 'no-op';
    ids.set(d.address, action === 'replace' ? UNKNOWN : match.id);
    const dataLoss = action === 'replace' && handler.holdsData(match);
    changes.push({ ...base, action, id: match.id, changes: diff, forcedBy, dataLoss, live: match });
  }

  // what the stack owns and no longer declares (or declares as another kind), and duplicates
  for (const [key, rs] of owned) {
    const [kind, ...rest] = key.split(':') as [ManagedKind, ...string[]];
    const path = rest.join(':');
    for (const r of rs) {
      if (claimed.has(r) || (opts.only && !opts.only.includes(path))) continue;
      const handler = KINDS[kind];
      changes.push({
        address: addressOf(kind, path),
        kind,
        path,
        action: 'delete',
        id: r.id,
        name: r.name,
        changes: [],
        forcedBy: [],
        dataLoss: handler.holdsData(r),
        live: r,
      });
    }
  }
  if (problems.length) throw new PlanError(problems);
  const scoped = changes.filter((c) => inScope(c.path));
  const knownIds = Object.fromEntries([...ids].filter(([, id]) => id !== UNKNOWN));
  return { stack: stack.name, changes: scoped, summary: summarize(scoped), knownIds };
}

function claimProblem(label: string, path: string, clash: LiveResource): string {
  const owner = ownerOf(clash.tags);
  if (owner)
    return `${path}: the ${label} "${clash.name}" (${clash.id}) belongs to stack "${owner.stack}" (${owner.path}); it cannot be claimed by this stack. Rename it here, or destroy it there.`;
  return `${path}: a ${label} named "${clash.name}" (${clash.id}) already exists and no stack manages it; adopt it with \`gpufleet import ${path} ${clash.id}\`, or rename it here.`;
}

export function summarize(changes: PlannedChange[]): Plan['summary'] {
  const count = (...as: Action[]) => changes.filter((c) => as.includes(c.action)).length;
  return { add: count('create', 'replace'), change: count('update'), destroy: count('delete', 'replace') };
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'no-op');
}
