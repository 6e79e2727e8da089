// POST /v2/pods/{id}/action: every row of 3.2 through the API, from every status, and every status
// code of 7.2 that the action operation can answer (429 is in pods-rate-limit.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { POD_ACTIONS, type PodAction, type PodStatus } from '../../model/records/pod.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import {
  call,
  cpuBody,
  createPod,
  expectJsonPathErrors,
  expectPodView,
  expectProblem,
  forceStatus,
  gpuBody,
  H100,
  keyFor,
  startPodsControlPlane,
} from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
beforeAll(async () => {
  cp = await startPodsControlPlane();
  user = await cp.newAccount('read_write');
});
afterAll(async () => cp?.close());

const act = (id: string, json: unknown, key: string | null = user.key) => call(cp, `/v2/pods/${id}/action`, { method: 'POST', json, key });
const get = async (id: string) => (await call(cp, `/v2/pods/${id}`, { key: user.key })).body;

/** a pod of the account in `status`, as the API and the provisioner would have left it */
async function podIn(status: PodStatus, opts: { locked?: boolean; cpu?: boolean } = {}): Promise<string> {
  const body = opts.cpu ? cpuBody({ locked: opts.locked ?? false }) : gpuBody({ locked: opts.locked ?? false });
  const id = (await createPod(cp, body, user.key)).body.id as string;
  if (status === 'PROVISIONING') return id;
  if (status === 'EXITED' || status === 'TERMINATED') {
    if (opts.locked) await call(cp, `/v2/pods/${id}`, { method: 'PATCH', key: user.key, json: { locked: false } });
    const r = await act(id, { action: status === 'EXITED' ? 'stop' : 'terminate' });
    expect(r.status, r.text).toBe(status === 'EXITED' ? 200 : 204);
    if (opts.locked) await call(cp, `/v2/pods/${id}`, { method: 'PATCH', key: user.key, json: { locked: true } });
    return id;
  }
  await forceStatus(cp, id, status);
  return id;
}

// spec 3.2: [from, action] → next status (terminate answers 204)
const VALID: Record<string, PodStatus> = {
  'EXITED start': 'PROVISIONING',
  'ERROR start': 'PROVISIONING',
  'RUNNING stop': 'EXITED',
  'PROVISIONING stop': 'EXITED',
  'STARTING stop': 'EXITED',
  'RUNNING restart': 'RUNNING',
  'RUNNING terminate': 'TERMINATED',
  'EXITED terminate': 'TERMINATED',
  'ERROR terminate': 'TERMINATED',
  'PROVISIONING terminate': 'TERMINATED',
  'STARTING terminate': 'TERMINATED',
};
const FROM: PodStatus[] = ['PROVISIONING', 'STARTING', 'RUNNING', 'EXITED', 'ERROR', 'TERMINATED'];
const rows: [PodStatus, PodAction][] = FROM.flatMap((s) => POD_ACTIONS.map((a) => [s, a] as [PodStatus, PodAction]));

describe('3.2 through the API: every status × every action', () => {
  test.each(rows)('%s + %s', async (from, action) => {
    const id = await podIn(from);
    const before = await get(id);
    expect(before.status).toBe(from);
    const next = VALID[`${from} ${action}`];
    const r = await act(id, { action });
    const after = await get(id);
    expectPodView(after);
    if (!next) {
      // 409 and unchanged
      expectProblem(r, 409, { code: 'INVALID_TRANSITION' });
      expect(r.body.detail).toContain(from);
      expect(after).toEqual(before);
      return;
    }
    if (action === 'terminate') {
      expect(r.status, r.text).toBe(204);
      expect(r.text).toBe('');
      expect(after.status).toBe('TERMINATED');
      expect(after.actions).toEqual([]);
      expect(after.cost).toBe(0);
      expect(after.runtime).toBeNull();
      return;
    }
    expect(r.status, r.text).toBe(200);
    expectPodView(r.body);
    expect(r.body.status).toBe(next);
    expect(r.body).toEqual({ ...after, runtime: r.body.runtime === null ? null : after.runtime });
    if (action === 'start') {
      // heads toward RUNNING: placed again, cost accruing
      expect(r.body.cost).toBeGreaterThan(0);
      expect(r.body.dataCenterId).not.toBeNull();
    }
    if (action === 'stop') {
      expect(r.body.cost).toBe(0);
      expect(r.body.runtime).toBeNull();
      // disk kept
      expect(r.body.disk).toBe(before.disk);
      expect(r.body.mounts).toEqual(before.mounts);
      expect(r.body.actions).toEqual(['start', 'terminate']);
    }
    if (action === 'restart') {
      expect(r.body.runtime).not.toBeNull();
      expect(r.body.actions).toEqual(['stop', 'restart', 'terminate']);
    }
  });
});

describe('side effects', () => {
  async function freeH100(): Promise<number> {
    const c = await call(cp, `/v2/catalog/gpus/${encodeURIComponent(H100)}`, { key: user.key });
    expect(c.status, c.text).toBe(200);
    return c.body.availability.free as number;
  }

  test('stop releases the GPUs and start takes them again; terminate releases them for good', async () => {
    const free0 = await freeH100();
    const id = (await createPod(cp, gpuBody({ gpu: { id: H100, count: 4 } }), user.key)).body.id;
    expect(await freeH100()).toBe(free0 - 4);
    expect((await act(id, { action: 'stop' })).status).toBe(200);
    expect(await freeH100()).toBe(free0);
    expect((await act(id, { action: 'start' })).status).toBe(200);
    expect(await freeH100()).toBe(free0 - 4);
    expect((await act(id, { action: 'terminate' })).status).toBe(204);
    expect(await freeH100()).toBe(free0);
  });

  test('restart keeps the pod RUNNING in place (same host, same cost)', async () => {
    const id = await podIn('RUNNING');
    const before = await get(id);
    const r = await act(id, { action: 'restart' });
    expect(r.body.status).toBe('RUNNING');
    expect(r.body.dataCenterId).toBe(before.dataCenterId);
    expect(r.body.cost).toBe(before.cost);
  });

  test('DELETE is the same as terminate, and idempotent', async () => {
    const id = await podIn('RUNNING');
    const d1 = await call(cp, `/v2/pods/${id}`, { method: 'DELETE', key: user.key });
    expect(d1.status).toBe(204);
    expect(d1.text).toBe('');
    expect((await get(id)).status).toBe('TERMINATED');
    const d2 = await call(cp, `/v2/pods/${id}`, { method: 'DELETE', key: user.key });
    expect(d2.status).toBe(204);
  });

  test('CPU pods follow the same table', async () => {
    const id = await podIn('PROVISIONING', { cpu: true });
    expect((await act(id, { action: 'stop' })).body.status).toBe('EXITED');
    expect((await act(id, { action: 'start' })).body.status).toBe('PROVISIONING');
    expect((await act(id, { action: 'terminate' })).status).toBe(204);
  });
});

describe('locked pods', () => {
  test.each(['PROVISIONING', 'STARTING', 'RUNNING'] as const)('%s: stop → 409, not published; terminate still works', async (status) => {
    const id = await podIn(status, { locked: true });
    const before = await get(id);
    expect(before.locked).toBe(true);
    expect(before.actions).not.toContain('stop');
    const r = await act(id, { action: 'stop' });
    expectProblem(r, 409);
    expect(r.body.detail).toMatch(/locked/);
    expect(await get(id)).toEqual(before);
    expect((await act(id, { action: 'terminate' })).status).toBe(204);
  });

  test('a locked RUNNING pod can still restart; a locked EXITED pod can still start', async () => {
    const running = await podIn('RUNNING', { locked: true });
    expect((await act(running, { action: 'restart' })).status).toBe(200);
    const exited = await podIn('EXITED', { locked: true });
    expect((await get(exited)).locked).toBe(true);
    expect((await act(exited, { action: 'start' })).status).toBe(200);
  });
});

describe('7.2 status codes of the action operation', () => {
  let id: string;
  beforeAll(async () => {
    id = await podIn('PROVISIONING');
  });

  async function unchanged(fn: () => Promise<void>) {
    const before = await get(id);
    await fn();
    expect(await get(id)).toEqual(before);
  }

  test('400: malformed JSON', async () => {
    await unchanged(async () => {
      for (const body of ['{"action":', '{action: "stop"}', '"stop', '{"action":"stop"}}']) {
        const r = await call(cp, `/v2/pods/${id}/action`, { method: 'POST', key: user.key, headers: { 'content-type': 'application/json' }, body });
        expectProblem(r, 400);
      }
    });
  });

  test('401: missing, malformed, unknown key', async () => {
    await unchanged(async () => {
      expectProblem(await act(id, { action: 'stop' }, null), 401);
      expectProblem(await call(cp, `/v2/pods/${id}/action`, { method: 'POST', key: null, json: { action: 'stop' }, headers: { authorization: 'Token abc' } }), 401);
      expectProblem(await act(id, { action: 'stop' }, 'gf_not_a_real_key_000000000000'), 401);
    });
  });

  test('403: a read key', async () => {
    const reader = await keyFor(cp, user.accountId, 'read');
    await unchanged(async () => {
      expectProblem(await act(id, { action: 'stop' }, reader), 403);
    });
  });

  test('404: unknown pod, another account\'s pod', async () => {
    expectProblem(await act('nope-not-a-pod', { action: 'stop' }), 404);
    const other = await cp.newAccount('read_write');
    await unchanged(async () => {
      expectProblem(await act(id, { action: 'stop' }, other.key), 404);
      expectProblem(await act(id, { action: 'terminate' }, other.key), 404);
    });
  });

  test('409: an action the status does not publish', async () => {
    await unchanged(async () => {
      expectProblem(await act(id, { action: 'start' }), 409);
      expectProblem(await act(id, { action: 'restart' }), 409);
    });
  });

  test('422: body failing validation, with JSONPath errors', async () => {
    await unchanged(async () => {
      const cases: [unknown, string | RegExp][] = [
        [{}, '$.action: is required'],
        [{ action: 'pause' }, '$.action'],
        [{ action: 'STOP' }, '$.action'],
        [{ action: 1 }, '$.action'],
        [{ action: 'stop', force: true }, '$.force: unknown property'],
        [[], /^\$: /],
        ['stop', /^\$: /],
        [null, /^\$: /],
      ];
      for (const [body, err] of cases) {
        const r = await act(id, body);
        expectProblem(r, 422, { errorMatching: err });
        expectJsonPathErrors(r);
      }
    });
  });

  test('415: a body that is not JSON', async () => {
    await unchanged(async () => {
      const r = await call(cp, `/v2/pods/${id}/action`, { method: 'POST', key: user.key, headers: { 'content-type': 'text/plain' }, body: 'action=stop' });
      expectProblem(r, 415);
    });
  });
});
