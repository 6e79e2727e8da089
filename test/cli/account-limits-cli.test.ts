// `gpufleet accounts limits` run as the real bin against a listening control plane: an operator sets
// limits (--json equals what the API then answers), `none` clears one, repeatable --gpus-type; the
// account reads its own as a table; a tenant setting them exits 1 with the 403's detail; a malformed
// value is usage (exit 2) and sends nothing.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { runCli } from './run-cli.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100 80GB PCIe';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
beforeAll(async () => {
  cp = await startTestControlPlane();
  user = await cp.newAccount('read_write');
});
afterAll(async () => cp?.close());

const api = async (key = cp.adminKey) => (await (await cp.api(`/v2/accounts/${user.accountId}/limits`, { key })).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('an operator sets and clears limits; --json is what the API answers after', async () => {
  const op = { url: cp.url, key: cp.adminKey };
  const set = await runCli(
    ['accounts', 'limits', user.accountId, '--gpus', '8', '--gpus-type', `${H100}=4`, '--gpus-type', `${A100}=2`, '--workers', '60', '--spend-per-hour', '80', '--monthly-budget', '2500.5', '--budget-action', 'stop', '--json'],
    op,
  );
  expect(set.stderr, set.stdout).toBe('');
  expect(set.code, set.stdout + set.stderr).toBe(0);
  const shown = JSON.parse(set.stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(shown).toEqual(await api());
  expect(shown.limits).toMatchObject({ gpus: { limit: 8 }, gpusByType: { [H100]: { limit: 4 }, [A100]: { limit: 2 } }, workers: { limit: 60 }, spendPerHour: { limit: 80 }, monthlyBudget: { limit: 2500.5 } });
  expect(shown.budgetAction).toBe('stop');

  const cleared = await runCli(['accounts', 'limits', user.accountId, '--gpus', 'none', '--gpus-type', `${A100}=none`, '--json'], op);
  expect(cleared.code, cleared.stdout + cleared.stderr).toBe(0);
  const after = await api();
  expect(after.limits.gpus.limit).toBeNull();
  expect(Object.keys(after.limits.gpusByType)).toEqual([H100]);
  expect(after.limits.workers.limit).toBe(60);
});

test('the account reads its own limits as a table; setting them with its key exits 1 with the 403', async () => {
  const own = { url: cp.url, key: user.key };
  const shown = await runCli(['accounts', 'limits', user.accountId], own);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(/workers\s.*60/);
  expect(shown.stdout).toMatch(/pods\s.*unlimited/);
  const refused = await runCli(['accounts', 'limits', user.accountId, '--pods', '3'], own);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/403|operator/i);
  expect((await api()).limits.pods.limit).toBeNull();
});

test('a malformed value is a usage error (exit 2) and changes nothing', async () => {
  const op = { url: cp.url, key: cp.adminKey };
  for (const args of [['--gpus', '-1'], ['--gpus', '1.5'], ['--spend-per-hour', 'lots'], ['--gpus-type', 'H100'], ['--budget-action', 'pause']]) {
    const r = await runCli(['accounts', 'limits', user.accountId, ...args], op);
    expect(r.code, args.join(' ')).toBe(2);
  }
  expect((await api()).limits.pods.limit).toBeNull();
});
