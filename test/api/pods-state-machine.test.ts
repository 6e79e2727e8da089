// Spec 3.1 (actions each status publishes) and 3.2 (what each action does), row by row, directly on
// model/records/pod-state-machine.ts; and the view invariants of 2.1 that follow (cost, runtime) on toPodView.
import { describe, expect, test } from 'vitest';
import { actionsFor, holdsCompute, transition } from '../../model/records/pod-state-machine.ts';
import { POD_ACTIONS, POD_STATUSES, toPodView, type PodAction, type PodRecord, type PodStatus } from '../../model/records/pod.ts';

// spec 3.1, verbatim
const PUBLISHED: Record<PodStatus, PodAction[]> = {
  PROVISIONING: ['stop', 'terminate'],
  STARTING: ['stop', 'terminate'],
  RUNNING: ['stop', 'restart', 'terminate'],
  EXITED: ['start', 'terminate'],
  ERROR: ['start', 'terminate'],
  TERMINATED: [],
};

describe('3.1 actions published per status', () => {
  test.each(POD_STATUSES)('%s', (status) => {
    expect([...actionsFor(status)].sort()).toEqual([...PUBLISHED[status]].sort());
  });

  test('the table covers every status and only the four actions', () => {
    expect([...POD_STATUSES].sort()).toEqual(Object.keys(PUBLISHED).sort());
    expect([...POD_ACTIONS].sort()).toEqual(['restart', 'start', 'stop', 'terminate']);
  });

  test.each(POD_STATUSES)('locked %s publishes everything but stop', (status) => {
    expect(actionsFor(status, true)).toEqual(actionsFor(status).filter((a) => a !== 'stop'));
  });

  test('actionsFor returns a fresh array (callers cannot corrupt the table)', () => {
    const a = actionsFor('RUNNING');
    a.push('start');
    expect(actionsFor('RUNNING')).not.toContain('start');
  });
});

describe('3.2 transitions', () => {
  test.each(['EXITED', 'ERROR'] as const)('start from %s heads toward RUNNING (placed again)', (from) => {
    const t = transition(from, 'start');
    expect(t).not.toBeNull();
    expect(t!.desiredStatus).toBe('RUNNING');
    expect(['PROVISIONING', 'STARTING', 'RUNNING']).toContain(t!.status);
    expect(t!.place).toBe(true);
    expect(t!.restart).toBe(false);
  });

  test.each(['RUNNING', 'PROVISIONING', 'STARTING'] as const)('stop from %s → EXITED, compute released', (from) => {
    const t = transition(from, 'stop');
    expect(t).toMatchObject({ status: 'EXITED', desiredStatus: 'EXITED', place: false, restart: false });
    expect(holdsCompute(t!.status)).toBe(false);
  });

  test('restart from RUNNING → RUNNING, container restarted in place', () => {
    expect(transition('RUNNING', 'restart')).toMatchObject({ status: 'RUNNING', desiredStatus: 'RUNNING', place: false, restart: true });
  });

  test.each(['RUNNING', 'EXITED', 'ERROR', 'PROVISIONING', 'STARTING'] as const)('terminate from %s → TERMINATED', (from) => {
    expect(transition(from, 'terminate')).toMatchObject({ status: 'TERMINATED', desiredStatus: 'TERMINATED', place: false });
  });

  // "any state, any action not in that state's actions → unchanged, 409": the machine answers null
  const invalid: [PodStatus, PodAction][] = [];
  for (const s of POD_STATUSES) for (const a of POD_ACTIONS) if (!PUBLISHED[s].includes(a)) invalid.push([s, a]);
  test.each(invalid)('%s + %s is not a transition', (s, a) => {
    expect(transition(s, a)).toBeNull();
  });

  test('every published action is a transition and every other one is not (locked and unlocked)', () => {
    for (const locked of [false, true])
      for (const s of POD_STATUSES)
        for (const a of POD_ACTIONS) expect(transition(s, a, locked) !== null, `${s} ${a} locked=${locked}`).toBe(actionsFor(s, locked).includes(a));
  });

  test.each(['RUNNING', 'PROVISIONING', 'STARTING'] as const)('a locked pod cannot be stopped from %s, but can be terminated', (from) => {
    expect(transition(from, 'stop', true)).toBeNull();
    expect(transition(from, 'terminate', true)).not.toBeNull();
  });

  test('nothing leaves TERMINATED', () => {
    for (const a of POD_ACTIONS) for (const locked of [false, true]) expect(transition('TERMINATED', a, locked)).toBeNull();
  });

  test('only PROVISIONING, STARTING and RUNNING hold compute', () => {
    expect(POD_STATUSES.filter((s) => holdsCompute(s))).toEqual(['PROVISIONING', 'STARTING', 'RUNNING']);
  });
});

function record(status: PodStatus, extra: Partial<PodRecord> = {}): PodRecord {
  return {
    id: 'p1', accountId: 'a1', name: 'n', image: 'busybox', args: '', disk: 10, ports: ['8888/http'], env: {},
    registry: null, mounts: {}, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, cloud: 'SECURE', locked: false,
    template: null, status, statusReason: null, desiredStatus: 'RUNNING', dataCenterIds: [], allowedCudaVersions: [],
    hostId: 'h1', dataCenterId: 'dc', gpuUuids: ['GPU-1'], allocated: true, costPerHr: 2.5, cudaVersion: '12.4',
    restartGeneration: 0, specGeneration: 0,
    observed: {
      containerId: 'c', containerStartedAt: new Date(Date.now() - 60_000).toISOString(),
      ports: [{ private: 8888, public: 40000, type: 'http', ip: '192.0.2.1' }], gpus: [{ util: 1, memoryUtil: 2 }],
      cpuUtil: 3, memoryUtil: 4, observedAt: new Date().toISOString(),
    },
    tags: {}, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(), startedAt: new Date().toISOString(),
    terminatedAt: null,
    ...extra,
  } as PodRecord;
}

describe('2.1 view invariants', () => {
  test.each(POD_STATUSES)('%s: cost, runtime and actions', (status) => {
    const v = toPodView(record(status));
    expect(v.actions).toEqual(actionsFor(status));
    if (status === 'EXITED' || status === 'TERMINATED') expect(v.cost).toBe(0);
    if (holdsCompute(status)) expect(v.cost).toBe(2.5);
    if (status === 'RUNNING') {
      expect(v.runtime).not.toBeNull();
      expect(v.runtime!.uptime).toBeGreaterThanOrEqual(59);
      // an HTTP port's URL is on the proxy domain, when the control plane has one (docs/connect.md)
      expect(v.runtime!.ports).toEqual([{ private: 8888, public: 40000, type: 'http', ip: '192.0.2.1', url: null }]);
      const proxied = toPodView(record(status), Date.now(), { domain: 'pods.example.net', scheme: 'https' });
      expect(proxied.runtime!.ports[0]!.url).toBe('https://pod1-8888.pods.example.net'.replace('pod1', proxied.id));
    } else expect(v.runtime).toBeNull();
  });

  test('ERROR costs nothing when the pod holds no compute', () => {
    expect(toPodView(record('ERROR', { allocated: false })).cost).toBe(0);
  });

  test('RUNNING without an observation has no runtime yet', () => {
    expect(toPodView(record('RUNNING', { observed: null })).runtime).toBeNull();
  });

  test('exactly one of gpu and cpu; locked hides stop', () => {
    const g = toPodView(record('RUNNING', { locked: true }));
    expect(g.gpu).toBeDefined();
    expect('cpu' in g).toBe(false);
    expect(g.actions).toEqual(['restart', 'terminate']);
    const c = toPodView(record('RUNNING', { gpu: undefined, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }));
    expect('gpu' in c).toBe(false);
    expect(c.cpu).toEqual({ id: 'cpu3c', vcpuCount: 2, memory: 4 });
  });
});
