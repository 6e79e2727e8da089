// Stacks that never lose a pod: the plan asks the API's dry run where each new, replaced or resized
// pod would go and prints it; a replacement or a resize that cannot be placed leaves the old pod
// exactly as it was (same id, not terminated, same GPUs). Two record-only hosts of 2 GPUs each.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { formatPlan, planJson } from '../../provider/engine/plan-format.ts';
import { makePlan, runApply, runDestroy } from '../../provider/engine/run.ts';
import { Pod } from '../../provider/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { apiFor, engineOptions, GPU, listPods, synthStack } from './helpers.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'sp-a', gpus: 2, dataCenterId: 'dc-sp' },
    { id: 'sp-b', gpus: 2, dataCenterId: 'dc-sp' },
  ]);
});
afterAll(async () => cp?.close());

const stack = (name: string, pods: Record<string, { count: number; gpuId?: string }>) =>
  synthStack(name, (s) => {
    for (const [path, p] of Object.entries(pods))
      new Pod(s, path, { name: `${name}-${path}`, image: 'trainer:1', gpu: { id: p.gpuId ?? GPU, count: p.count }, dataCenterIds: ['dc-sp'] });
  });

test('the plan names the host each new pod would take, or why none can', async () => {
  const api = await apiFor(cp);
  const plan = await makePlan(await stack('sp1', { a: { count: 2 } }), api);
  const a = plan.changes.find((c) => c.path === 'a')!;
  expect(a.placement).toMatchObject({ placeable: true, dataCenterId: 'dc-sp' });
  expect(formatPlan(plan)).toMatch(/# placement: would run on host sp-[ab] \(dc-sp\), \$[\d.]+\/hr/);
  expect((planJson(plan) as { changes: { placement?: unknown }[] }).changes[0]!.placement).toEqual(a.placement);
  // a pod the fleet cannot hold: the plan says why before anything is applied
  const big = await makePlan(await stack('sp1', { a: { count: 2 }, huge: { count: 3 } }), api);
  expect(big.changes.find((c) => c.path === 'huge')!.placement).toMatchObject({ placeable: false, code: 'PLACEMENT_IMPOSSIBLE' });
  expect(formatPlan(big)).toContain('# placement: REFUSED (PLACEMENT_IMPOSSIBLE)');
});

test('gpu.count 1 → 2 with no room anywhere: the plan says REFUSED, apply keeps the pod exactly as it was', async () => {
  const api = await apiFor(cp);
  // a: 1 GPU, b: 1 GPU beside it, c: 2 GPUs on the other host; every GPU is taken
  const declared = await stack('sp2', { a: { count: 1 }, b: { count: 1 } });
  const first = await runApply(declared, engineOptions(api));
  expect(first.applied?.ok, first.applied?.errors.join('\n')).toBe(true);
  const full = await runApply(await stack('sp2', { a: { count: 1 }, b: { count: 1 }, c: { count: 2 } }), engineOptions(api));
  expect(full.applied?.ok, full.applied?.errors.join('\n')).toBe(true);
  const before = await listPods(api);

  const grown = await stack('sp2', { a: { count: 2 }, b: { count: 1 }, c: { count: 2 } });
  const plan = await makePlan(grown, api);
  const a = plan.changes.find((c) => c.path === 'a')!;
  expect(a).toMatchObject({ action: 'update', placement: { placeable: false, code: 'CAPACITY_UNAVAILABLE' } });
  expect(formatPlan(plan)).toContain('# placement: REFUSED (CAPACITY_UNAVAILABLE)');
  const run = await runApply(grown, engineOptions(api));
  expect(run.applied?.ok).toBe(false);
  expect(run.applied?.errors.join('\n')).toMatch(/pod\.a: .*fewer than 2 free GPUs/);
  // nothing was destroyed or changed: the same pods, ids, GPU counts and statuses
  expect(await listPods(api)).toEqual(before);
  await runDestroy(grown, engineOptions(api));
});

test('a replacement that cannot be placed is never started: the old pod stays, apply says why', async () => {
  const api = await apiFor(cp);
  const first = await runApply(await stack('sp3', { a: { count: 1 } }), engineOptions(api));
  expect(first.applied?.ok, first.applied?.errors.join('\n')).toBe(true);
  const [old] = await listPods(api);
  // another GPU type forces a replacement; no host has it
  const moved = await stack('sp3', { a: { count: 1, gpuId: 'NVIDIA A100-SXM4-80GB' } });
  const plan = await makePlan(moved, api);
  expect(plan.changes.find((c) => c.path === 'a')).toMatchObject({ action: 'replace', placement: { placeable: false } });
  const run = await runApply(moved, engineOptions(api));
  expect(run.applied?.ok).toBe(false);
  expect(run.applied?.errors.join('\n')).toContain(`the old pod [id=${old!.id}] is kept as it was`);
  const after = await listPods(api);
  expect(after).toEqual([old]);
});
