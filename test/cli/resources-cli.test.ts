// `gpufleet templates|volumes|registries|public-endpoints|gpus|cpus|datacenters|billing|events|account`
// run as the real bin against a listening control plane (record-only hosts): each verb's --json
// parses and equals what the API answers for the same resource, create/update send what the options
// say, delete removes, and a refusal exits 1.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { DC, H100, startPodsControlPlane, uniqueName } from '../api/pods-helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';

type J = Record<string, any>;
let cp: TestControlPlane;
let user: { url: string; key: string };
let operator: { url: string; key: string };

beforeAll(async () => {
  cp = await startPodsControlPlane();
  user = { url: cp.url, key: (await cp.newAccount('read_write')).key };
  operator = { url: cp.url, key: cp.adminKey };
});
afterAll(async () => cp?.close());

const json = (r: CliResult): J => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(r.stdout) as J;
};
const api = async (path: string, key = user.key): Promise<J> => {
  const res = await cp.api(path, { key });
  expect(res.status, path).toBe(200);
  return (await res.json()) as J;
};

/** create, list, get, update, delete of one group: --json equals the API's record at each step */
async function roundTrip(group: string, path: string, listKey: string | null, create: string[], update: string[], changed: J, env = user, idKey = 'id'): Promise<void> {
  const made = json(await runCli([group, 'create', ...create, '--json'], env));
  const id = String(made[idKey]);
  expect(await api(`${path}/${encodeURIComponent(id)}`, env.key)).toEqual(made);

  const listed = json(await runCli([group, 'list', '--json'], env)) as unknown as J[];
  const apiList = await api(path, env.key);
  expect(listed).toEqual(listKey === null ? apiList : apiList[listKey]);
  expect(listed.map((r) => r[idKey])).toContain(id);

  const table = await runCli([group, 'list'], env);
  expect(table.code).toBe(0);
  expect(table.stdout).toContain(id);

  expect(json(await runCli([group, 'get', id, '--json'], env))).toEqual(await api(`${path}/${encodeURIComponent(id)}`, env.key));
  if (update.length) {
    const updated = json(await runCli([group, 'update', id, ...update, '--json'], env));
    expect(updated).toMatchObject(changed);
    expect(await api(`${path}/${encodeURIComponent(id)}`, env.key)).toEqual(updated);
  }
  expect(json(await runCli([group, 'delete', id, '--json'], env))).toEqual({ [idKey]: id, deleted: true });
  expect((await cp.api(`${path}/${encodeURIComponent(id)}`, { key: env.key })).status).toBe(404);
  const gone = await runCli([group, 'get', id], env);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toMatch(/HTTP 404/);
}

describe('resource groups: list, get, create, update, delete with --json', () => {
  test('templates', async () => {
    const name = uniqueName('tpl');
    await roundTrip(
      'templates',
      '/v2/templates',
      'templates',
      ['--name', name, '--image', 'busybox:1.36', '--args', 'sleep 60', '--disk', '7', '--env', 'A=1', '--env', 'B=two', '--port', '8888/http'],
      ['--image', 'busybox:1.37', '--env', 'C=3'],
      { image: 'busybox:1.37', env: { C: '3' } },
    );
  }, 120_000);

  test('network volumes (volumes, alias network-volumes)', async () => {
    await roundTrip('network-volumes', '/v2/network-volumes', 'networkVolumes', ['--name', uniqueName('vol'), '--size', '10', '--datacenter', DC], ['--size', '20'], { size: 20 });
  }, 120_000);

  test('registries: the password from stdin, never printed', async () => {
    const name = uniqueName('reg');
    const made = json(await runCli(['registries', 'create', '--name', name, '--username', 'robot', '--password-stdin', '--json'], user, 30_000, { input: 's3cret-pw\n' }));
    expect(JSON.stringify(made)).not.toContain('s3cret-pw');
    expect(made).toMatchObject({ name });
    // without --password-stdin no password is sent, and the API requires one
    const noPassword = await runCli(['registries', 'create', '--name', uniqueName('reg'), '--username', 'robot'], user, 30_000, { input: 'ignored\n' });
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr).toMatch(/password/);
    expect(await api(`/v2/registries/${made.id}`)).toEqual(made);
    const listed = json(await runCli(['registries', 'list', '--json'], user)) as unknown as J[];
    expect(listed).toEqual((await api('/v2/registries')).registries);
    const updated = json(await runCli(['registries', 'update', made.id, '--username', 'robot2', '--json'], user));
    expect(updated).toEqual(await api(`/v2/registries/${made.id}`));
    expect(JSON.stringify(updated)).not.toContain('s3cret-pw');
    expect(json(await runCli(['registries', 'delete', made.id, '--json'], user))).toEqual({ id: made.id, deleted: true });
    expect((await cp.api(`/v2/registries/${made.id}`, { key: user.key })).status).toBe(404);
  }, 120_000);

  test('public endpoints (operators publish; known by slug), over a template and an endpoint made with the CLI', async () => {
    const tpl = json(await runCli(['templates', 'create', '--name', uniqueName('pt'), '--image', 'busybox:1.36', '--serverless', '--json'], operator));
    expect(tpl.serverless).toBe(true);
    const ep = json(await runCli(['endpoints', 'create', '--name', uniqueName('pe'), '--template', tpl.id, '--gpu', H100, '--workers-max', '1', '--json'], operator));
    const slug = `cli-${process.pid}`;
    await roundTrip(
      'public-endpoints',
      '/v2/public-endpoints',
      null,
      ['--slug', slug, '--endpoint', ep.id, '--name', 'CLI model', '--unit', 'second', '--usd-per-unit', '0.0005', '--max-units-per-job', '600'],
      [],
      {},
      operator,
      'slug',
    );
    // a user may not publish: exit 1 with the API's 403
    const r = await runCli(['public-endpoints', 'create', '--slug', `${slug}-u`, '--endpoint', ep.id, '--name', 'x', '--unit', 'request', '--usd-per-unit', '1'], user);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 403/);
  }, 120_000);
});

describe('read-only groups: --json equals the API', () => {
  test('gpus list and get, cpus list, datacenters list: prices and stock', async () => {
    const gpus = json(await runCli(['gpus', 'list', '--json'], user)) as unknown as J[];
    expect(gpus).toEqual((await api('/v2/catalog/gpus')).gpus);
    expect(gpus.find((g) => g.id === H100)).toMatchObject({ price: expect.any(Object), availability: { free: expect.any(Number) } });
    expect(json(await runCli(['gpus', 'get', H100, '--json'], user))).toEqual(await api(`/v2/catalog/gpus/${encodeURIComponent(H100)}`));
    expect(json(await runCli(['cpus', 'list', '--json'], user))).toEqual((await api('/v2/catalog/cpus')).cpus);
    expect(json(await runCli(['datacenters', 'list', '--json'], user))).toEqual((await api('/v2/catalog/datacenters')).dataCenters);
    const table = await runCli(['gpus', 'list'], user);
    expect(table.stdout).toContain(H100);
  }, 120_000);

  test('billing pods with a range and bucket; account; events list', async () => {
    const start = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const end = new Date().toISOString();
    const billing = json(await runCli(['billing', 'pods', '--start', start, '--end', end, '--bucket', 'day', '--json'], user));
    expect(billing).toEqual(await api(`/v2/billing/pods?startTime=${encodeURIComponent(start)}&endTime=${encodeURIComponent(end)}&bucketSize=day`));
    expect(billing.metadata.query).toMatchObject({ bucketSize: 'day' });
    const account = json(await runCli(['account', '--json'], user));
    expect(account.id).toBe((await api('/v2/account')).id);
    const pod = (await (await cp.api('/v2/pods', { method: 'POST', key: user.key, json: { name: uniqueName('ev'), image: 'busybox:1.36', gpu: { id: H100, count: 1 } } })).json()) as J;
    const events = json(await runCli(['events', '--resource', pod.id, '--json'], user));
    expect(events).toEqual((await api(`/v2/events?resourceId=${pod.id}`)).events);
    expect(events.length).toBeGreaterThan(0);
    const bad = await runCli(['billing', 'pods', '--start', 'yesterday'], user);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/HTTP 422/);
    expect((await runCli(['billing', 'dinners'], user)).code).toBe(2);
  }, 120_000);
});

describe('account limits (docs/teams.md)', () => {
  test('accounts set-limits (operator) sets numbers, none clears, per-type limits merge; accounts limits equals the API; a user may read their own, not set them', async () => {
    const team = await cp.newAccount('read_write');
    const set = json(await runCli(['accounts', 'set-limits', team.accountId, '--gpus', '16', '--gpus-by-type', `${H100}=8`, '--pods', '5', '--monthly-budget', '2000.5', '--budget-action', 'stop', '--json'], operator));
    expect(set).toEqual(await api(`/v2/accounts/${team.accountId}/limits`, cp.adminKey));
    expect(set.limits).toMatchObject({ gpus: { limit: 16 }, gpusByType: { [H100]: { limit: 8 } }, pods: { limit: 5 }, monthlyBudget: { limit: 2000.5 } });
    expect(set.budgetAction).toBe('stop');
    const cleared = json(await runCli(['accounts', 'set-limits', team.accountId, '--gpus', 'none', '--json'], operator));
    expect(cleared.limits).toMatchObject({ gpus: { limit: null }, pods: { limit: 5 } });
    const own = json(await runCli(['accounts', 'limits', team.accountId, '--json'], { url: cp.url, key: team.key }));
    expect(own).toEqual(await api(`/v2/accounts/${team.accountId}/limits`, team.key));
    const table = await runCli(['accounts', 'limits', team.accountId], { url: cp.url, key: team.key });
    expect(table.stdout).toContain(`gpus: ${H100}`);
    const refused = await runCli(['accounts', 'set-limits', team.accountId, '--gpus', '99'], { url: cp.url, key: team.key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 403/);
    expect((await runCli(['accounts', 'set-limits', team.accountId, '--gpus', 'lots'], operator)).code).toBe(2);
  }, 120_000);
});
