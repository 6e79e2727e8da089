// The host's conditions (docs/fleet.md "Conditions"): Reachable and Schedulable, derived from the
// record's own fields each time a writer stores it, through the one helper (conditions.ts). The
// messages are ours: the SSH error of a missed heartbeat stays in statusReason (operators only).
import type { HostRecord } from '../records/host.ts';
import type { ConditionUpdate, HostConditionType } from '../records/condition.ts';
import { setConditions } from './conditions.ts';

type Update = ConditionUpdate<HostConditionType>;

function reachable(h: HostRecord): Update {
  if (h.status === 'UNREACHABLE')
    return h.rejectedHostKeySha256
      ? { type: 'Reachable', status: 'False', reason: 'HostKeyMismatch', message: 'the host presented another host key; an operator must accept it' }
      : { type: 'Reachable', status: 'False', reason: 'HeartbeatsMissed', message: 'the host did not answer the last heartbeats; it is unreachable until one succeeds' };
  if (h.missedHeartbeats > 0)
    return { type: 'Reachable', status: 'True', reason: 'HeartbeatMissed', message: `missed ${h.missedHeartbeats} heartbeat(s) in a row` };
  return { type: 'Reachable', status: 'True', reason: 'HeartbeatAnswered', message: 'the host answered its last heartbeat' };
}

function schedulable(h: HostRecord): Update {
  if (h.drained) return { type: 'Schedulable', status: 'False', reason: 'Drained', message: 'drained by an operator: takes no new pods; pods on it keep running' };
  if (h.status === 'UNREACHABLE') return { type: 'Schedulable', status: 'False', reason: 'Unreachable', message: 'takes no new pods while it does not answer' };
  return { type: 'Schedulable', status: 'True', reason: 'Ready', message: 'takes new pods' };
}

/** The host with its conditions brought in line with its fields (times kept where a status held). */
export function withHostConditions(h: HostRecord, now: string = new Date().toISOString()): HostRecord {
  return { ...h, conditions: setConditions(h.conditions, [reachable(h), schedulable(h)], now) };
}
