// GraphQL `myself { spendLimit currentSpendPerHr clientBalance }` (runpodctl's GetUser text, traced in
// runpodctl-texts.ts; runpod-python reads none of the three) agree with GET /v2/accounts/{id}/limits
// and GET /v2/account, and follow a change within 1 s (the test allows 3 s): a limit set and cleared,
// a pod created and stopped, credits added.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { runpodctl } from './gql-client.ts';
import { GET_USER } from './runpodctl-texts.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8 }]);
});
afterAll(async () => cp?.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

it('spendLimit, currentSpendPerHr and clientBalance agree with the limits and with what runs, within 3 s of each change', async () => {
  const a = await cp.newAccount('read_write', 100);
  const myself = async () => {
    const r = await runpodctl(cp.url, { key: a.key }, GET_USER);
    expect(r.errors).toBeUndefined();
    return r.data.myself as Json;
  };
  const rest = async () => {
    const limits = (await (await cp.api(`/v2/accounts/${a.accountId}/limits`, { key: a.key })).json()) as Json;
    const account = (await (await cp.api('/v2/account', { key: a.key })).json()) as Json;
    return { limit: limits.limits.spendPerHour.limit, used: limits.limits.spendPerHour.used, clientBalance: account.clientBalance as number };
  };
  /** the GraphQL figures match REST's and `expected` within 3 s; answers how long it took */
  const agrees = async (expected: { spendLimit: number | null; currentSpendPerHr: number }) => {
    const t0 = Date.now();
    await waitFor(
      `myself to show ${JSON.stringify(expected)}`,
      async () => {
        const [g, r] = [await myself(), await rest()];
        return (
          g.spendLimit === expected.spendLimit &&
          g.currentSpendPerHr === expected.currentSpendPerHr &&
          r.limit === g.spendLimit &&
          r.used === g.currentSpendPerHr &&
          Math.abs(r.clientBalance - (g.clientBalance as number)) < 0.001
        );
      },
      3000,
      50,
    );
    return Date.now() - t0;
  };

  expect(await myself()).toMatchObject({ spendLimit: null, currentSpendPerHr: 0, clientBalance: 100 });
  await cp.api(`/v2/accounts/${a.accountId}/limits`, { method: 'PATCH', json: { spendPerHour: 80 } });
  await agrees({ spendLimit: 80, currentSpendPerHr: 0 });
  const created = (await (await cp.api('/v2/pods', { method: 'POST', key: a.key, json: { name: 'p', image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 2 } } })).json()) as Json;
  await agrees({ spendLimit: 80, currentSpendPerHr: 5.98 });
  await cp.api(`/v2/pods/${created.id}/action`, { method: 'POST', key: a.key, json: { action: 'stop' } });
  await agrees({ spendLimit: 80, currentSpendPerHr: 0 });
  await cp.api(`/v2/accounts/${a.accountId}/limits`, { method: 'PATCH', json: { spendPerHour: null } });
  await agrees({ spendLimit: null, currentSpendPerHr: 0 });
  await cp.api(`/v2/accounts/${a.accountId}/credits`, { method: 'POST', json: { amount: 25 } });
  await waitFor('clientBalance to include the credits', async () => (await myself()).clientBalance > 124, 3000, 50);
});
