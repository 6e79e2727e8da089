// Events from the store's commits: whatever writes a pod's or a host's status (a user's action, the
// provisioner, an operator, a serverless scaler), the change is seen here, once, with the actor the
// transaction named. Nothing that writes a status has to remember to record an event.
import { actorFields, SYSTEM_ACTOR, type AccountRecord, type EventResourceType, type HostRecord, type PodRecord } from '../../../model/index.ts';
import type { CommitInfo, Store, StoreChange } from '../../../store/index.ts';
import type { EventLog } from './event-log.ts';
import { GpuEvents } from './gpu-events.ts';

/**
 * A monthly-budget threshold written on an account (core/quotas/spend-guard.ts) is a `budget.threshold`
 * event of the account, once per threshold, month and budget (docs/teams.md, "Monthly budget").
 */
function budgetThreshold(account: AccountRecord | undefined, commit: CommitInfo, last: Map<string, string>, log: EventLog): void {
  const alert = account?.budgetAlert;
  if (!account || !alert) return;
  const key = `budget:${account.id}`;
  const seen = `${alert.month}/${alert.budget}/${alert.percent}`;
  if (last.get(key) === seen) return;
  const previous = last.get(key)?.startsWith(`${alert.month}/${alert.budget}/`) ? `${last.get(key)!.split('/')[2]}%` : null;
  last.set(key, seen);
  log.append({
    resourceType: 'account',
    resourceId: account.id,
    accountId: account.id,
    type: 'budget.threshold',
    status: `${alert.percent}%`,
    previousStatus: previous,
    reason: `${alert.percent} % of the monthly budget reached: ${alert.spent} USD of ${alert.budget} USD spent in ${alert.month}`,
    ...actorFields(commit.actor ?? SYSTEM_ACTOR),
  });
}

/**
 * A host whose kernel boot id changed from one the control plane had read is a `host.restarted` event
 * (docs/pods.md, "A host that restarted"); the first id read is no event.
 */
function hostRestarted(h: HostRecord, actor: string, last: Map<string, string>, log: EventLog): void {
  if (!h.bootId) return;
  const key = `boot:${h.id}`;
  const before = last.get(key);
  last.set(key, h.bootId);
  if (before === undefined || before === h.bootId) return;
  log.append({
    resourceType: 'host',
    resourceId: h.id,
    accountId: null,
    type: 'host.restarted',
    status: h.status,
    previousStatus: h.status,
    reason: `host ${h.id} restarted: its boot id is ${h.bootId} (was ${before}); its pods that were running are started again`,
    ...actorFields(actor),
  });
}

/** A pod's move as one string: a new one is a `pod.moved` event (model/records/pod-move.ts). */
const moveKey = (p: PodRecord): string | null => (p.move?.toHostId ? `${p.move.fromHostId}>${p.move.toHostId}@${p.move.since}` : null);

/** Starts recording; the returned function stops it. */
export async function recordStatusEvents(store: Store, log: EventLog): Promise<() => void> {
  const last = new Map<string, string>();
  const gpus = new GpuEvents(log);
  const moves = new Map<string, string>();
  // subscribed first, so no commit falls between reading the statuses and listening
  const stop = store.onCommit((changes, commit) => {
    for (const c of changes) {
      onChange(c, commit, last, log, gpus);
      if (c.collection === 'pods') onMove(c.id, c.deleted ? undefined : c.record, commit, moves, log);
    }
  });
  for (const p of await store.list('pods')) {
    if (!last.has(p.id)) last.set(p.id, p.status);
    const key = moveKey(p);
    if (key && !moves.has(p.id)) moves.set(p.id, key);
  }
  for (const h of await store.list('hosts')) {
    if (!last.has(h.id)) last.set(h.id, h.status);
    if (h.bootId && !last.has(`boot:${h.id}`)) last.set(`boot:${h.id}`, h.bootId);
    gpus.know(h);
  }
  for (const a of await store.list('accounts'))
    if (a.budgetAlert && !last.has(`budget:${a.id}`)) last.set(`budget:${a.id}`, `${a.budgetAlert.month}/${a.budgetAlert.budget}/${a.budgetAlert.percent}`);
  return stop;
}

function onChange(c: StoreChange, commit: CommitInfo, last: Map<string, string>, log: EventLog, gpus: GpuEvents): void {
  if (c.collection === 'accounts') return budgetThreshold(c.record, commit, last, log);
  if (c.collection !== 'pods' && c.collection !== 'hosts') return;
  const actor = commit.actor ?? SYSTEM_ACTOR;
  const previous = last.get(c.id) ?? null;
  if (c.collection === 'hosts') {
    if (c.deleted || !c.record) gpus.forget(c.id);
    else gpus.changed(c.record, actor);
  }
  if (c.deleted || !c.record) {
    last.delete(c.id);
    if (c.collection === 'hosts') last.delete(`boot:${c.id}`);
    if (c.collection === 'hosts' && previous !== null)
      log.append({ resourceType: 'host', resourceId: c.id, accountId: null, type: 'host.removed', status: null, previousStatus: previous, reason: null, ...actorFields(actor) });
    return;
  }
  if (c.collection === 'hosts') hostRestarted(c.record, actor, last, log);
  const rec: PodRecord | HostRecord = c.record;
  if (rec.status === previous) return;
  last.set(c.id, rec.status);
  const resourceType: EventResourceType = c.collection === 'hosts' ? 'host' : c.record.endpointId !== undefined ? 'worker' : 'pod';
  // an interruptible pod stopped because its GPUs went to another pod (docs/teams.md): pod.preempted
  const preempted = c.collection === 'pods' && rec.status === 'EXITED' && c.record.preemption;
  log.append({
    resourceType,
    resourceId: c.id,
    accountId: c.collection === 'pods' ? c.record.accountId : null,
    type: preempted ? `${resourceType}.preempted` : `${resourceType}.${rec.status.toLowerCase()}`,
    status: rec.status,
    previousStatus: previous,
    reason: rec.statusReason,
    ...actorFields(actor),
  });
}

/** `pod.moved` (or `worker.moved`): the pod was placed on another host, keeping its id; the reason names both hosts and why. */
function onMove(id: string, rec: PodRecord | undefined, commit: CommitInfo, moves: Map<string, string>, log: EventLog): void {
  if (!rec) {
    moves.delete(id);
    return;
  }
  const key = moveKey(rec);
  if (!key || moves.get(id) === key) return;
  moves.set(id, key);
  const resourceType: EventResourceType = rec.endpointId !== undefined ? 'worker' : 'pod';
  log.append({
    resourceType,
    resourceId: id,
    accountId: rec.accountId,
    type: `${resourceType}.moved`,
    status: rec.status,
    previousStatus: rec.status,
    reason: `moved from host ${rec.move!.fromHostId} to host ${rec.move!.toHostId}: ${rec.move!.detail}`,
    ...actorFields(commit.actor ?? SYSTEM_ACTOR),
  });
}
