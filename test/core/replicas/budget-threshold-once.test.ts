// The monthly budget's thresholds on several replicas (docs/teams.md, "Monthly budget"): every replica
// runs the spend guard; when two of them pass at the same moment (one clock the test controls, moved
// by hours), the threshold is written on the account once and each replica's event log holds one
// budget.threshold event per threshold (the other's commit reaches it through the database).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { startReplicas, type TestReplicas } from '../../harness/replicas.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { monthStart } from '../../../core/quotas/index.ts';

const HOUR = 3_600_000;
let clock = Date.now();
let replicas: TestReplicas | undefined;
let cps: TestControlPlane[] = [];
beforeAll(async () => {
  replicas = await startReplicas(2, { quotaClock: () => clock, config: { spendGuardIntervalMs: HOUR } });
  cps = replicas.cps;
  await seedHosts(cps[0]!.services.store, [{ gpus: 8 }]);
}, 120_000);
afterAll(async () => replicas?.close());

it('two replicas passing at once announce each threshold once, and both logs show it once', async () => {
  const a = await cps[0]!.newAccount('read_write', 1000);
  expect((await cps[1]!.api(`/v2/accounts/${a.accountId}/limits`, { method: 'PATCH', json: { monthlyBudget: 10 } })).status).toBe(200);
  const created = await cps[0]!.api('/v2/pods', { method: 'POST', key: a.key, json: { name: 'b', image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
  expect(created.status).toBe(201);
  const podId = ((await created.json()) as { id: string }).id;
  const [rec] = (await cps[0]!.services.store.list('billing', { resourceId: podId })).filter((b) => b.endedAt === null);
  const since = Date.parse(rec!.startedAt);
  const base = monthStart(since + 5 * HOUR) > since ? monthStart(since + 5 * HOUR) : since;
  const thresholds = (cp: TestControlPlane) => cp.services.events.log.all((e) => e.type === 'budget.threshold' && e.resourceId === a.accountId).map((e) => e.status);

  for (const [hours, want] of [
    [2, ['50%']],
    [3, ['50%', '80%']],
    [3.5, ['50%', '80%', '100%']],
  ] as const) {
    clock = base + hours * HOUR;
    await Promise.all(cps.map((cp) => cp.services.spendGuard.tick()));
    for (const cp of cps) await waitFor(`replica's log to show ${want.join(', ')}`, async () => JSON.stringify(thresholds(cp)) === JSON.stringify(want), 5000, 50);
  }
  // nothing late: a duplicate would arrive through the other replica's notification within this
  await new Promise((r) => setTimeout(r, 1000));
  for (const cp of cps) expect(thresholds(cp)).toEqual(['50%', '80%', '100%']);
  expect((await cps[1]!.services.store.get('accounts', a.accountId))?.budgetAlert).toMatchObject({ percent: 100, budget: 10 });
}, 60_000);
