// Admission is atomic across replicas (docs/teams.md, "Quotas"): 50 concurrent creates spread over three
// control planes on one PostgreSQL database, against an account limited to 5 GPUs on a fleet with room
// for 48, place exactly 5; every other answer is 403 QUOTA_EXCEEDED and none is a 5xx.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { startReplicas, type TestReplicas } from '../../harness/replicas.ts';

let replicas: TestReplicas | undefined;
let cps: TestControlPlane[] = [];
beforeAll(async () => {
  replicas = await startReplicas(3, { rateLimits: 'minute=10000000,hour=100000000,day=1000000000' });
  cps = replicas.cps;
  await seedHosts(cps[0]!.services.store, [{ gpus: 16 }, { gpus: 16 }, { gpus: 16 }]);
}, 120_000);
afterAll(async () => replicas?.close());

it('50 concurrent creates over three replicas against a quota of 5 GPUs: exactly 5 placed', async () => {
  const a = await cps[0]!.newAccount('read_write', 1000);
  const set = await cps[1]!.api(`/v2/accounts/${a.accountId}/limits`, { method: 'PATCH', json: { gpus: 5 } });
  expect(set.status).toBe(200);
  const answers = await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const r = await cps[i % 3]!.api('/v2/pods', { method: 'POST', key: a.key, json: { name: `race-${i}`, image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
      return { status: r.status, code: ((await r.json()) as { code?: string }).code };
    }),
  );
  expect(answers.filter((x) => x.status >= 500)).toEqual([]);
  expect(answers.filter((x) => x.status === 201)).toHaveLength(5);
  expect(answers.filter((x) => x.status !== 201)).toEqual(Array(45).fill({ status: 403, code: 'QUOTA_EXCEEDED' }));
  const placed = (await cps[2]!.services.store.list('pods', { accountId: a.accountId })).filter((p) => p.allocated);
  expect(placed.reduce((n, p) => n + p.gpu!.count, 0)).toBe(5);
  const view = (await (await cps[2]!.api(`/v2/accounts/${a.accountId}/limits`, { key: a.key })).json()) as { limits: { gpus: unknown } };
  expect(view.limits.gpus).toEqual({ limit: 5, used: 5 });
}, 120_000);
