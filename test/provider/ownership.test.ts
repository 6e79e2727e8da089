// Drift, ownership, import, the stack lock and --watch, against a listening control plane.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ApiClient } from '../../client/api-client.ts';
import { importResource, ImportError } from '../../provider/engine/import.ts';
import { StackLockedError } from '../../provider/engine/lock.ts';
import { hasChanges, PlanError } from '../../provider/engine/plan.ts';
import { makePlan, runApply, runDestroy, runWatch, type RunResult } from '../../provider/engine/run.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { apiFor, engineOptions, GPU, listPods, startFleet, testStack } from './helpers.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startFleet();
});
afterAll(async () => cp?.close());

const pod = async (api: ApiClient, name: string) => (await listPods(api)).find((p) => p.name === name);

test('drift: a pod terminated, edited or stopped outside the stack shows in the plan and apply repairs it', async () => {
  const api = await apiFor(cp);
  const stack = await testStack('d1');
  await runApply(stack, engineOptions(api));
  const first = (await pod(api, 'trainer'))!;

  await api.post(`/v2/pods/${first.id}/action`, { action: 'terminate' });
  const plan = await makePlan(stack, api);
  expect(plan.changes.filter((c) => c.action !== 'no-op')).toMatchObject([{ path: 'trainer', action: 'create' }]);
  await runApply(stack, engineOptions(api));
  const second = (await pod(api, 'trainer'))!;
  expect(second.id).not.toBe(first.id);
  expect(second.status).toBe('PROVISIONING');

  await api.patch(`/v2/pods/${second.id}`, { image: 'hand-edited:1', env: { STAGE: 'dev', EXTRA: '1' } });
  await api.post(`/v2/pods/${second.id}/action`, { action: 'stop' });
  const drifted = await makePlan(stack, api);
  const change = drifted.changes.find((c) => c.path === 'trainer')!;
  expect(change.action).toBe('update');
  expect(change.changes.map((c) => `${c.field}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`)).toEqual([
    'env: {"STAGE":"dev","EXTRA":"1"} -> {"STAGE":"dev"}',
    'image: "hand-edited:1" -> "trainer:1"',
    'status: "EXITED" -> "RUNNING"',
  ]);
  await runApply(stack, engineOptions(api));
  expect(await pod(api, 'trainer')).toMatchObject({ id: second.id, image: 'trainer:1', env: { STAGE: 'dev' }, status: 'PROVISIONING' });
  expect(hasChanges(await makePlan(stack, api))).toBe(false);
});

test('a resource no stack owns, or another stack owns, is never claimed', async () => {
  const api = await apiFor(cp);
  const untagged = await api.post<{ id: string }>('/v2/pods', { name: 'trainer', image: 'busybox', gpu: { id: GPU } });
  const stack = await testStack('o1');
  await expect(makePlan(stack, api)).rejects.toThrow(PlanError);
  await expect(runApply(stack, engineOptions(api))).rejects.toThrow(
    `trainer: a pod named "trainer" (${untagged.id}) already exists and no stack manages it; adopt it with \`gpufleet import trainer ${untagged.id}\`, or rename it here.`,
  );

  await api.patch(`/v2/pods/${untagged.id}`, { tags: { 'gpufleet:stack': 'other', 'gpufleet:path': 'gpu/main' } });
  await expect(makePlan(stack, api)).rejects.toThrow(
    `trainer: the pod "trainer" (${untagged.id}) belongs to stack "other" (gpu/main); it cannot be claimed by this stack.`,
  );
  await expect(importResource(api, stack, 'trainer', untagged.id)).rejects.toThrow(
    `The pod ${untagged.id} belongs to stack "other" (gpu/main); it cannot be claimed by stack "o1".`,
  );
  // destroy touches only what carries this stack's tag
  const destroyed = await runDestroy(stack, engineOptions(api));
  expect(destroyed.applied).toBeNull();
  expect((await pod(api, 'trainer'))?.tags['gpufleet:stack']).toBe('other');
});

test('import adopts an existing pod: it is tagged, and the plan works on it instead of creating another', async () => {
  const api = await apiFor(cp);
  const existing = await api.post<{ id: string }>('/v2/pods', { name: 'trainer', image: 'old:1', gpu: { id: GPU } });
  const stack = await testStack('i1');
  await expect(importResource(api, stack, 'nope', existing.id)).rejects.toThrow(ImportError);
  await expect(importResource(api, stack, 'i1/trainer', 'missing')).rejects.toThrow('No pod missing exists in this account.');
  expect(await importResource(api, stack, 'i1/trainer', existing.id)).toEqual({ kind: 'pod', path: 'trainer', id: existing.id, name: 'trainer' });
  expect((await pod(api, 'trainer'))?.tags).toEqual({ 'gpufleet:stack': 'i1', 'gpufleet:path': 'trainer' });

  const plan = await makePlan(stack, api);
  const trainer = plan.changes.find((c) => c.path === 'trainer')!;
  // the imported pod has no network mount: the mount kind is fixed at creation, so it is replaced
  expect(trainer).toMatchObject({ action: 'replace', id: existing.id, forcedBy: ['mounts'] });
  expect(trainer.changes.map((c) => c.field)).toContain('image');
});

test('a locked stack refuses a second apply, naming the holder; the lock is released afterwards', async () => {
  const api = await apiFor(cp);
  const stack = await testStack('l1');
  await api.post('/v2/stack-locks/l1', { holder: 'ci-runner-7 (apply)', ttlSeconds: 60 });
  const err = await runApply(stack, engineOptions(api)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StackLockedError);
  expect((err as Error).message).toMatch(/^Stack "l1" is locked by ci-runner-7 \(apply\) since .+ \(until .+\); wait for it to finish/);
  expect(await pod(api, 'trainer')).toBeUndefined();
  // another account's stack of the same name is its own lock
  await runApply(stack, engineOptions(await apiFor(cp)));

  await expect(api.delete('/v2/stack-locks/l1?holder=somebody-else')).rejects.toThrow(/only its holder may release it/);
  await api.delete('/v2/stack-locks/l1?holder=' + encodeURIComponent('ci-runner-7 (apply)'));
  const ok = await runApply(stack, engineOptions(api));
  expect(ok.applied?.ok).toBe(true);
  await expect(api.get('/v2/stack-locks/l1')).rejects.toThrow('Stack "l1" is not locked.');
});

test('apply --watch keeps reconciling: a pod terminated outside comes back at the next pass', async () => {
  const api = await apiFor(cp);
  const stack = await testStack('w1');
  const controller = new AbortController();
  const passes: (RunResult | Error)[] = [];
  let terminated = '';
  const watching = runWatch(stack, {
    ...engineOptions(api),
    intervalMs: 100,
    signal: controller.signal,
    onCycle: (r) => {
      passes.push(r);
      if (passes.length === 2) {
        void pod(api, 'trainer').then(async (p) => {
          terminated = p!.id;
          await api.post(`/v2/pods/${p!.id}/action`, { action: 'terminate' });
        });
      }
      const last = r as RunResult;
      if (terminated && last.plan?.changes.some((c) => c.path === 'trainer' && c.action === 'create')) controller.abort();
    },
  });
  const timer = setTimeout(() => controller.abort(), 20_000);
  await watching;
  clearTimeout(timer);
  expect(passes[0]).toMatchObject({ plan: { summary: { add: 5 } } });
  expect(passes[1]).toMatchObject({ applied: null });
  const back = (await pod(api, 'trainer'))!;
  expect(terminated).not.toBe('');
  expect(back.id).not.toBe(terminated);
  // the watch held the lock; it is free again
  await expect(api.get('/v2/stack-locks/w1')).rejects.toThrow('is not locked');
});
