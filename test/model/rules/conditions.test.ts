// The condition helper (model/rules/conditions.ts) and the rules built on it: lastTransitionTime moves
// only when a condition's status does; host conditions follow the record's fields; a user's action
// leaves the pod's Scheduled and ContainerRunning conditions.
import { describe, expect, test } from 'vitest';
import { conditionOf, setCondition, setConditions } from '../../../model/rules/conditions.ts';
import { withHostConditions } from '../../../model/rules/host-conditions.ts';
import { actionConditions, podConditions } from '../../../model/rules/pod-conditions.ts';
import type { HostRecord } from '../../../model/records/host.ts';

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:01:00.000Z';
const T2 = '2025-01-01T00:02:00.000Z';

describe('setCondition', () => {
  test('a record without conditions gets the first one, timed now', () => {
    expect(setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Starting', message: 'starting' }, T0)).toEqual([
      { type: 'Ready', status: 'False', reason: 'Starting', message: 'starting', lastTransitionTime: T0 },
    ]);
  });

  test('a new reason or message with the same status keeps lastTransitionTime', () => {
    const a = setCondition([], { type: 'Ready', status: 'False', reason: 'RetryBackoff', message: 'trying again in 1 s' }, T0);
    const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'RetryBackoff', message: 'trying again in 2 s' }, T1);
    const c = setCondition(b, { type: 'Ready', status: 'False', reason: 'Crashed', message: 'crashed' }, T2);
    expect(b[0]).toEqual({ type: 'Ready', status: 'False', reason: 'RetryBackoff', message: 'trying again in 2 s', lastTransitionTime: T0 });
    expect(c[0]).toEqual({ type: 'Ready', status: 'False', reason: 'Crashed', message: 'crashed', lastTransitionTime: T0 });
  });

  test('a changed status takes the new time; other conditions keep theirs and their order', () => {
    const a = setConditions([], [
      { type: 'A', status: 'True', reason: 'Yes', message: 'a' },
      { type: 'B', status: 'False', reason: 'No', message: 'b' },
    ], T0);
    const b = setCondition(a, { type: 'A', status: 'Unknown', reason: 'Lost', message: 'a?' }, T1);
    expect(b.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([['A', 'Unknown', T1], ['B', 'False', T0]]);
    // the input list is not changed
    expect(a[0]!.status).toBe('True');
  });

  test('setting the same conditions again changes nothing (a provisioner pass does not churn the record)', () => {
    const updates = [podConditions.placed('host_1'), podConditions.present(), podConditions.running()];
    const once = setConditions(undefined, updates, T0);
    expect(JSON.stringify(setConditions(once, updates, T1))).toBe(JSON.stringify(once));
  });

  test('a reason that is not one CamelCase word is refused', () => {
    expect(() => setCondition([], { type: 'A', status: 'True', reason: 'pull failed', message: '' }, T0)).toThrow(/CamelCase/);
    expect(() => setCondition([], { type: 'A', status: 'True', reason: 'pullFailed', message: '' }, T0)).toThrow(/CamelCase/);
  });
});

describe('pod conditions', () => {
  test('create: Scheduled True (Placed on its host), ContainerRunning False (Pending)', () => {
    const c = actionConditions({ hostId: 'host_a' }, 'create', T0);
    expect(conditionOf(c, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Placed', message: expect.stringContaining('host_a'), lastTransitionTime: T0 });
    expect(conditionOf(c, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Pending', lastTransitionTime: T0 });
  });

  test('stop after RUNNING: Scheduled False (Released), ContainerRunning False (Stopped); ImageReady kept', () => {
    const running = setConditions(actionConditions({ hostId: 'host_a' }, 'create', T0), [podConditions.present(), podConditions.running()], T1);
    const stopped = actionConditions({ conditions: running, hostId: 'host_a' }, 'stop', T2);
    expect(conditionOf(stopped, 'Scheduled')).toMatchObject({ status: 'False', reason: 'Released', lastTransitionTime: T2 });
    expect(conditionOf(stopped, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Stopped', lastTransitionTime: T2 });
    expect(conditionOf(stopped, 'ImageReady')).toMatchObject({ status: 'True', reason: 'Present', lastTransitionTime: T1 });
  });

  test("a failed pull's message is pull-errors.ts's sentence, nothing of docker's", () => {
    expect(podConditions.pullFailed('image not found')).toEqual({ type: 'ImageReady', status: 'False', reason: 'PullFailed', message: 'image pull failed: image not found' });
  });
});

describe('host conditions', () => {
  const host = (o: Partial<HostRecord> = {}) =>
    ({ id: 'host_a', drained: false, status: 'READY', statusReason: null, missedHeartbeats: 0, rejectedHostKeySha256: null, ...o }) as HostRecord;

  test('a healthy host is Reachable and Schedulable', () => {
    const h = withHostConditions(host(), T0);
    expect(h.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([['Reachable', 'True', 'HeartbeatAnswered'], ['Schedulable', 'True', 'Ready']]);
  });

  test('drained: Schedulable False (Drained) from the drain on; undrained: True again with a new time', () => {
    const ready = withHostConditions(host(), T0);
    const drained = withHostConditions({ ...ready, drained: true, status: 'DRAINING' }, T1);
    expect(conditionOf(drained.conditions, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Drained', lastTransitionTime: T1 });
    expect(conditionOf(drained.conditions, 'Reachable')?.lastTransitionTime).toBe(T0);
    const back = withHostConditions({ ...drained, drained: false, status: 'READY' }, T2);
    expect(conditionOf(back.conditions, 'Schedulable')).toMatchObject({ status: 'True', reason: 'Ready', lastTransitionTime: T2 });
  });

  test('a missed heartbeat rewords Reachable without a transition; UNREACHABLE is one', () => {
    const ready = withHostConditions(host(), T0);
    const missed = withHostConditions({ ...ready, missedHeartbeats: 1, statusReason: 'ssh: connect ECONNREFUSED' }, T1);
    expect(conditionOf(missed.conditions, 'Reachable')).toEqual({ type: 'Reachable', status: 'True', reason: 'HeartbeatMissed', message: 'missed 1 heartbeat(s) in a row', lastTransitionTime: T0 });
    const gone = withHostConditions({ ...missed, missedHeartbeats: 3, status: 'UNREACHABLE' }, T2);
    expect(conditionOf(gone.conditions, 'Reachable')).toMatchObject({ status: 'False', reason: 'HeartbeatsMissed', lastTransitionTime: T2 });
    expect(conditionOf(gone.conditions, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Unreachable', lastTransitionTime: T2 });
    // the SSH error stays in statusReason (operators), not in a condition
    expect(JSON.stringify(gone.conditions)).not.toContain('ECONNREFUSED');
  });
});

describe('host condition GpusHealthy (docs/gpu-health.md)', () => {
  const gpuHost = (health?: 'HEALTHY' | 'WARNING' | 'FAILURE') =>
    ({ id: 'h', status: 'READY', drained: false, missedHeartbeats: 0, facts: { gpus: [{ index: 0, uuid: 'GPU-0', name: 'x', memoryMiB: 1, typeId: null, ...(health ? { health, incidents: [{ kind: 'xid', xid: 79, counter: null, mnemonic: 'GPU_HAS_FALLEN_OFF_THE_BUS', action: 'RESTART_BM', health, live: true, message: 'm', firstSeen: 't', lastSeen: 't', count: 1, resolvedAt: null }] } : {}) }] } }) as unknown as HostRecord;
  test('False with GpuFailure naming the GPU and the Xid; True with GpuWarning; AllGpusHealthy otherwise; none on CPU hosts', () => {
    const cond = (h: HostRecord) => conditionOf(withHostConditions(h, 't1').conditions, 'GpusHealthy');
    expect(cond(gpuHost('FAILURE'))).toMatchObject({ status: 'False', reason: 'GpuFailure', message: expect.stringContaining('GPU 0 (GPU-0): Xid 79 (GPU_HAS_FALLEN_OFF_THE_BUS)') });
    expect(cond(gpuHost('WARNING'))).toMatchObject({ status: 'True', reason: 'GpuWarning' });
    expect(cond(gpuHost())).toMatchObject({ status: 'True', reason: 'AllGpusHealthy' });
    expect(cond({ ...gpuHost(), facts: { gpus: [] } } as unknown as HostRecord)).toBeUndefined();
  });
});
