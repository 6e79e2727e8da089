// The host's conditions (docs/fleet.md "Conditions"): Reachable, Schedulable and GpusHealthy (GPU hosts,
// docs/gpu-health.md), derived from the
// record's own fields each time a writer stores it, through the one helper (conditions.ts). The
// messages are ours: the SSH error of a missed heartbeat stays in statusReason (operators only).
import type { HostGpu, HostRecord } from '../records/host.ts';
import type { ConditionUpdate, HostConditionType } from '../records/condition.ts';
import { setConditions } from './conditions.ts';

type Update = ConditionUpdate<HostConditionType>;

function reachable(h: HostRecord): Update {
  if (h.lost)
    return h.lost.confirmed
      ? { type: 'Reachable', status: 'False', reason: 'Lost', message: 'an operator confirmed the host is gone; its pods were placed elsewhere' }
      : { type: 'Reachable', status: 'False', reason: 'Lost', message: 'unreachable for longer than the lost-host time; its movable pods were placed elsewhere (docs/gpu-health.md, "Acting on it")' };
  if (h.status === 'UNREACHABLE')
    return h.rejectedHostKeySha256
      ? { type: 'Reachable', status: 'False', reason: 'HostKeyMismatch', message: 'the host presented another host key; an operator must accept it' }
      : { type: 'Reachable', status: 'False', reason: 'HeartbeatsMissed', message: 'the host did not answer the last heartbeats; it is unreachable until one succeeds' };
  if (h.missedHeartbeats > 0)
    return { type: 'Reachable', status: 'True', reason: 'HeartbeatMissed', message: `missed ${h.missedHeartbeats} heartbeat(s) in a row` };
  return { type: 'Reachable', status: 'True', reason: 'HeartbeatAnswered', message: 'the host answered its last heartbeat' };
}

function schedulable(h: HostRecord): Update {
  if (h.drained && h.drain && !h.drain.finishedAt)
    return { type: 'Schedulable', status: 'False', reason: 'Draining', message: `drained with a deadline: its pods are being moved off; those left at ${h.drain.deadline} are stopped` };
  if (h.drained) return { type: 'Schedulable', status: 'False', reason: 'Drained', message: 'drained by an operator: takes no new pods; pods on it keep running' };
  if (h.status === 'UNREACHABLE') return { type: 'Schedulable', status: 'False', reason: 'Unreachable', message: 'takes no new pods while it does not answer' };
  return { type: 'Schedulable', status: 'True', reason: 'Ready', message: 'takes new pods' };
}

/** What one GPU's worst open incident is, in our words (never the kernel line itself). */
function gpuPhrase(g: HostGpu): string {
  const open = (g.incidents ?? []).filter((i) => i.resolvedAt === null && i.health === g.health);
  const i = open[open.length - 1];
  const what = i ? (i.kind === 'xid' ? `Xid ${i.xid} (${i.mnemonic})` : `${i.counter} (${i.mnemonic})`) : 'an incident';
  return `GPU ${g.index} (${g.uuid}): ${what}`;
}

function gpusHealthy(h: HostRecord): Update | null {
  // a record written with only some fields (tests, partial writers) may lack facts: no GPUs to speak of
  const gpus: readonly HostGpu[] = h.facts?.gpus ?? [];
  if (gpus.length === 0) return null;
  const failed = gpus.filter((g) => g.health === 'FAILURE');
  if (failed.length > 0)
    return { type: 'GpusHealthy', status: 'False', reason: 'GpuFailure', message: `${failed.length} GPU(s) in FAILURE take no new pods until a diagnostic passes or an operator clears them: ${failed.map(gpuPhrase).join('; ')}` };
  const warned = gpus.filter((g) => g.health === 'WARNING');
  if (warned.length > 0)
    return { type: 'GpusHealthy', status: 'True', reason: 'GpuWarning', message: `${warned.length} GPU(s) in WARNING stay schedulable: ${warned.map(gpuPhrase).join('; ')}` };
  return { type: 'GpusHealthy', status: 'True', reason: 'AllGpusHealthy', message: 'every GPU is healthy' };
}

/** Present only once a container got stuck (and False again when an operator cleared them). */
function stuck(h: HostRecord): Update[] {
  const n = h.stuckContainers?.length ?? 0;
  if (n > 0)
    return [{ type: 'ContainersStuck', status: 'True', reason: 'ExitTimedOut', message: `${n} container(s) of moved pods did not exit within 30 s of SIGKILL (a process stuck in the driver?); an operator should look at the host` }];
  return h.conditions?.some((c) => c.type === 'ContainersStuck') ? [{ type: 'ContainersStuck', status: 'False', reason: 'Cleared', message: 'no container is known to be stuck' }] : [];
}

/** The host with its conditions brought in line with its fields (times kept where a status held). */
export function withHostConditions(h: HostRecord, now: string = new Date().toISOString()): HostRecord {
  const gpus = gpusHealthy(h);
  return { ...h, conditions: setConditions(h.conditions, [reachable(h), schedulable(h), ...(gpus ? [gpus] : []), ...stuck(h)], now) };
}
