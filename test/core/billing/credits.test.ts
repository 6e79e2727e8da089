// Credits (spec 5.6): operators grant them (`POST /v2/accounts/{id}/credits`, `gpufleet accounts
// create|list|credit`); an account with nothing left (credits − usage ≤ 0) is refused job submission
// with 402 CREDITS_EXHAUSTED until credits are added; an operator account is never limited.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT } from '../../harness/control-plane.ts';
import { startJobWorld, type JobWorld } from '../../api/jobs/in-process-workers.ts';

const run = promisify(execFile);
let world: JobWorld;

beforeAll(async () => {
  world = await startJobWorld();
});
afterAll(async () => world?.close());

const credit = (id: string, body: unknown, key = world.cp.adminKey) => world.cp.api(`/v2/accounts/${id}/credits`, { method: 'POST', key, json: body });
const submit = (ep: string, key: string) => world.cp.api(`/v2/${ep}/run`, { method: 'POST', key, json: { input: {} } });

describe('POST /v2/accounts/{id}/credits', () => {
  test('an operator adds credits (and takes some back with a negative amount); the answer shows what is left', async () => {
    const acct = await world.cp.newAccount('read_write', 10);
    const up = await credit(acct.accountId, { amount: 2.5 });
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ id: acct.accountId, balance: 12.5, usage: 0, clientBalance: 12.5 });
    const down = await credit(acct.accountId, { amount: -20 });
    expect(await down.json()).toMatchObject({ balance: -7.5, clientBalance: -7.5 });
    expect((await (await world.cp.api('/v2/account', { key: acct.key })).json()) as object).toMatchObject({ balance: -7.5 });
  });

  test('refused and nothing changes: a tenant (even with an admin key), an unknown account, a bad amount', async () => {
    const acct = await world.cp.newAccount('admin', 10);
    const tenant = await credit(acct.accountId, { amount: 100 }, acct.key);
    expect(tenant.status).toBe(403);
    expect((await credit('acct_nope', { amount: 1 })).status).toBe(404);
    for (const body of [{}, { amount: '5' }, { amount: 1e10 }, { amount: 1, extra: true }]) {
      const r = await credit(acct.accountId, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(((await (await world.cp.api('/v2/account', { key: acct.key })).json()) as { balance: number }).balance).toBe(10);
  });
});

describe('job submission and credits', () => {
  test('nothing left: run, runsync and retry are 402 CREDITS_EXHAUSTED; after a grant they are accepted', async () => {
    const acct = await world.cp.newAccount('read_write', 1);
    const ep = await world.newEndpoint(acct.key);
    // a job that failed while there were credits, to retry later
    const failedId = ((await (await submit(ep, acct.key)).json()) as { id: string }).id;
    const w = await world.directory.issue(ep);
    const wcall = (p: string, body?: unknown) =>
      fetch(`${world.cp.url}/v2/${ep}${p}`, { method: body ? 'POST' : 'GET', headers: { authorization: w.token }, ...(body ? { body: JSON.stringify(body) } : {}) });
    expect((await wcall(`/job-take/${w.workerId}?job_in_progress=0`)).status).toBe(200);
    expect((await wcall(`/job-done/${w.workerId}/${failedId}?isStream=false`, { error: 'boom' })).status).toBe(200);
    expect((await submit(ep, acct.key)).status).toBe(200);
    // the grant takes effect at once (the submission check's short cache is dropped for the account)
    await credit(acct.accountId, { amount: -1 });
    const refused = await submit(ep, acct.key);
    expect(refused.status).toBe(402);
    const p = (await refused.json()) as { code: string; title: string; detail: string };
    expect(p).toMatchObject({ code: 'CREDITS_EXHAUSTED', title: 'Payment Required' });
    expect(p.detail).toContain(`/v2/accounts/${acct.accountId}/credits`);
    expect((await world.cp.api(`/v2/${ep}/runsync?wait=1000`, { method: 'POST', key: acct.key, json: { input: {} } })).status).toBe(402);
    const retry = await world.cp.api(`/v2/${ep}/retry/${failedId}`, { method: 'POST', key: acct.key });
    expect(retry.status).toBe(402);
    expect(((await (await world.cp.api(`/v2/${ep}/status/${failedId}`, { key: acct.key })).json()) as { status: string }).status).toBe('FAILED');
    expect(((await (await world.cp.api(`/v2/${ep}/health`, { key: acct.key })).json()) as { jobs: { inQueue: number } }).jobs.inQueue).toBe(1);
    await credit(acct.accountId, { amount: 5 });
    expect((await submit(ep, acct.key)).status).toBe(200);
  });

  test('usage counts: credits minus accrued usage at or below zero refuses jobs', async () => {
    const acct = await world.cp.newAccount('read_write', 1);
    const ep = await world.newEndpoint(acct.key);
    // an hour of a 2 USD/h resource already accrued (billing records are what workers and pods write)
    await world.cp.services.store.transact(async (tx) => {
      tx.put('billing', {
        id: `bill_test_${acct.accountId}`,
        accountId: acct.accountId,
        kind: 'endpoint',
        resourceId: ep,
        gpuTypeId: null,
        rate: 2,
        gpuRate: 2,
        cpuRate: 0,
        diskRate: 0,
        startedAt: new Date(Date.now() - 3_600_000).toISOString(),
        endedAt: new Date().toISOString(),
      });
    });
    expect((await submit(ep, acct.key)).status).toBe(402);
  });

  test('an operator account is not limited by its credits', async () => {
    const op = await world.cp.services.keys.createAccount({ email: `op-${Date.now()}@test.local`, operator: true, balance: 0 });
    const { key } = await world.cp.services.keys.createKey({ accountId: op.id, name: 'op', scope: 'read_write' });
    const ep = await world.newEndpoint(key);
    expect((await submit(ep, key)).status).toBe(200);
  });
});

describe('gpufleet accounts', () => {
  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const r = await run(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], {
        env: { ...process.env, GPUFLEET_URL: world.cp.url, GPUFLEET_API_KEY: world.cp.adminKey },
      });
      return { code: 0, ...r };
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string };
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  }

  test('create, list and credit (a negative amount after --) through the CLI', { timeout: 60_000 }, async () => {
    const email = `cli-${Date.now()}@test.local`;
    const made = await cli('accounts', 'create', '--email', email, '--credits', '7', '--json');
    expect(made.code, made.stderr).toBe(0);
    const a = JSON.parse(made.stdout) as { id: string; balance: number };
    expect(a.balance).toBe(7);
    const listed = JSON.parse((await cli('accounts', 'list', '--json')).stdout) as { id: string; email: string }[];
    expect(listed.find((x) => x.id === a.id)?.email).toBe(email);
    const table = await cli('accounts', 'list');
    expect(table.stdout).toContain(a.id);
    const up = await cli('accounts', 'credit', a.id, '2.5');
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain('credits 9.5 USD');
    const down = await cli('accounts', 'credit', '--json', a.id, '--', '-4');
    expect(down.code, down.stderr).toBe(0);
    expect(JSON.parse(down.stdout)).toMatchObject({ balance: 5.5, clientBalance: 5.5 });
    const bad = await cli('accounts', 'credit', a.id, 'lots');
    // a malformed argument is a usage error: exit 2, as commander's own (issue 13's exit codes)
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/amount in USD/);
    const unknown = await cli('accounts', 'credit', 'acct_nope', '1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/HTTP 404/);
  });
});
