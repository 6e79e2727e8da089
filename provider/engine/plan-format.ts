// Prints a plan the way Terraform does, so reviewers read it without learning a new format.
import { UNKNOWN } from '../kinds/index.ts';
import type { Plan, PlannedChange } from './plan.ts';
import { placementLine } from './placement-check.ts';

const SYMBOL: Record<PlannedChange['action'], string> = { create: '  +', update: '  ~', replace: '-/+', delete: '  -', 'no-op': '   ' };

function show(v: unknown): string {
  if (v === UNKNOWN) return UNKNOWN;
  if (v === undefined) return 'null';
  return JSON.stringify(v);
}

function headline(c: PlannedChange): string {
  const loss = c.dataLoss ? ' (its data is lost)' : '';
  switch (c.action) {
    case 'create':
      return `will be created`;
    case 'update':
      return `will be updated in-place`;
    case 'replace':
      return `must be replaced (forced by ${c.forcedBy.join(', ')})${loss}`;
    case 'delete':
      return `will be destroyed${loss}`;
    default:
      return 'has no changes';
  }
}

export function formatChange(c: PlannedChange): string[] {
  const id = c.id ? ` [id=${c.id}]` : '';
  const lines = [`  # ${c.address} ${headline(c)}`, `${SYMBOL[c.action]} ${c.address}${id}`];
  const width = Math.max(0, ...c.changes.map((f) => f.field.length));
  for (const f of c.changes) {
    const field = f.field.padEnd(width);
    if (c.action === 'create') lines.push(`      + ${field} = ${show(f.to)}`);
    else {
      const forces = c.action === 'replace' && f.forcesReplacement ? ' # forces replacement' : '';
      lines.push(`      ~ ${field} = ${show(f.from)} -> ${show(f.to)}${forces}`);
    }
  }
  if (c.placement) lines.push(`      # ${placementLine(c.placement)}`);
  return lines;
}

export function formatPlan(plan: Plan): string {
  const shown = plan.changes.filter((c) => c.action !== 'no-op').sort((a, b) => (a.address < b.address ? -1 : 1));
  if (!shown.length) return `No changes. The fleet matches stack "${plan.stack}".\n`;
  const out = [`gpufleet will perform the following actions in stack "${plan.stack}":`, ''];
  for (const c of shown) out.push(...formatChange(c), '');
  out.push(summaryLine(plan));
  return out.join('\n') + '\n';
}

export function summaryLine(plan: Plan): string {
  const { add, change, destroy } = plan.summary;
  return `Plan: ${add} to add, ${change} to change, ${destroy} to destroy.`;
}

/** `--json`: the plan without the raw synth and live records. */
export function planJson(plan: Plan): unknown {
  return {
    stack: plan.stack,
    summary: plan.summary,
    changes: plan.changes.map((c) => ({
      address: c.address,
      kind: c.kind,
      path: c.path,
      action: c.action,
      id: c.id,
      name: c.name,
      forcedBy: c.forcedBy,
      dataLoss: c.dataLoss,
      changes: c.changes,
      ...(c.placement ? { placement: c.placement } : {}),
    })),
  };
}
