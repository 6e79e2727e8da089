// Fault: the control plane is SIGKILLed after a public model job became COMPLETED (its final record
// durable) and before its charge was written: the child (fixtures/charge-held-child.ts) holds the
// charge's transaction uncommitted and says so; the kill lands there. Restarted as `gpufleet serve`
// on the same data directory (and database, under GPUFLEET_TEST_STORE=postgres), the control plane
// charges the caller exactly once, with the job's cost, from the job the queue still holds; a second
// restart charges nothing again.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { ADMIN_KEY, freePort, spawnControlPlane, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from '../../harness/test-store.ts';
import { waitFor } from '../../harness/wait-for.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/charge-held-child.ts');
const SLUG = 'held-charge-model';
const PRICE = 0.000002; // USD per token
const UNITS = 1234; // tokens the worker reports: 0.002468 USD
const COST_MICROS = 2468;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

type ChildMessage = { ready?: string; held?: string; issued?: { workerId: string; token: string }; error?: string };

/** the control plane with the charge hold, as a child this test can SIGKILL; its IPC messages are collected */
async function startHeldChild(env: Record<string, string>): Promise<{ proc: ChildProcess; messages: ChildMessage[]; exited: Promise<NodeJS.Signals | null> }> {
  const proc = fork(CHILD, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.resume();
  const messages: ChildMessage[] = [];
  proc.on('message', (m) => messages.push(m as ChildMessage));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, sig) => resolve(sig)));
  await waitFor(`the child control plane (${stderr})`, async () => proc.exitCode === null && messages.some((m) => m.ready), 60_000, 50);
  return { proc, messages, exited };
}

test('SIGKILL after a public model job is COMPLETED and before its charge is written: after the restart the caller is charged exactly once, and a second restart charges nothing', { timeout: 180_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-charge-crash-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const storeEnv: Record<string, string> =
    TEST_STORE === 'postgres' ? { GPUFLEET_DATABASE_URL: await freshTestDatabase(), GPUFLEET_SECRET_KEY: TEST_SECRET_KEY.toString('base64') } : {};
  const url = `http://127.0.0.1:${port}`;
  const api = async (p: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
    const res = await fetch(url + p, {
      method: init.method ?? 'GET',
      headers: { authorization: init.key ?? `Bearer ${ADMIN_KEY}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, any> };
  };

  const child = await startHeldChild({
    ...storeEnv,
    PORT: String(port),
    HOST: '127.0.0.1',
    GPUFLEET_DATA_DIR: dataDir,
    GPUFLEET_BOOTSTRAP_KEY: ADMIN_KEY,
    GPUFLEET_LOG_LEVEL: 'warn',
  });
  cleanup.push(async () => {
    child.proc.kill('SIGKILL');
    await child.exited;
  });
  // the operator publishes a model; a caller with credits calls it by slug
  const tpl = await api('/v2/templates', { method: 'POST', json: { name: 'model', image: 'busybox', serverless: true } });
  expect(tpl.status).toBe(201);
  const ep = await api('/v1/endpoints', { method: 'POST', json: { templateId: tpl.body.id, gpuTypeIds: ['ADA_24'], workersMin: 0, workersMax: 0 } });
  expect(ep.status).toBe(200);
  const endpointId = ep.body.id as string;
  const pub = await api('/v2/public-endpoints', { method: 'POST', json: { slug: SLUG, endpointId, name: 'held', pricing: { unit: 'token', usdPerUnit: PRICE, maxUnitsPerJob: 100_000 } } });
  expect(pub.status).toBe(201);
  const account = await api('/v2/accounts', { method: 'POST', json: { email: 'caller@test.local', balance: 10 } });
  expect(account.status).toBe(201);
  const key = await api('/v2/keys', { method: 'POST', json: { name: 'caller', scope: 'read_write', accountId: account.body.id } });
  expect(key.status).toBe(201);
  const caller = `Bearer ${key.body.key as string}`;

  child.proc.send({ issue: endpointId });
  const { workerId, token } = (await waitFor('a worker token', async () => child.messages.find((m) => m.issued)))!.issued!;
  const run = await api(`/v2/${SLUG}/run`, { method: 'POST', key: caller, json: { input: { prompt: 'hello' } } });
  expect(run.status).toBe(200);
  const jobId = run.body.id as string;
  // the worker's calls, as the worker protocol has them
  const taken = await api(`/v2/${endpointId}/job-take/${workerId}`, { key: token });
  expect(taken.body).toMatchObject({ id: jobId });
  const done = await api(`/v2/${endpointId}/job-done/${workerId}/${jobId}`, { method: 'POST', key: token, json: { output: { text: 'hi', usage: { units: UNITS } } } });
  expect(done.status).toBe(200);

  // the moment named: COMPLETED and durable, its charge's transaction written but held uncommitted
  await waitFor('the charge held', async () => child.messages.some((m) => m.held === jobId), 10_000, 20);
  child.proc.kill('SIGKILL');
  expect(await child.exited).toBe('SIGKILL');

  let cp: SpawnedControlPlane = await spawnControlPlane({ dataDir, port, env: storeEnv });
  cleanup.push(() => cp.kill('SIGKILL'));
  const status = await api(`/v2/${SLUG}/status/${jobId}`, { key: caller });
  expect(status.body).toMatchObject({ id: jobId, status: 'COMPLETED', output: { text: 'hi', usage: { units: UNITS, unit: 'token' }, cost: COST_MICROS / 1e6 } });
  const usage = async () => (await api('/v2/account', { key: caller })).body.usage as number;
  await waitFor('the charge after the restart', async () => (await usage()) > 0, 30_000, 100);
  const bill = await api(`/v2/billing/endpoints?endpointId=${SLUG}&bucketSize=day`, { key: caller });
  expect(bill.body.records).toEqual([expect.objectContaining({ endpointId: SLUG, slug: SLUG, totalAmount: COST_MICROS / 1e6 })]);
  expect(await usage()).toBe(COST_MICROS / 1e6);
  // written by the restarted control plane, which says so (the held transaction never committed)
  await waitFor('the late charge reported', async () => cp.output().includes(jobId), 10_000, 50);
  expect(cp.output()).toMatch(/1 public model job\(s\) charged by the sweep/);

  // a second crash and restart: the job is still held by the queue, its charge found, nothing added
  await cp.kill('SIGKILL');
  cp = await spawnControlPlane({ dataDir, port, env: storeEnv });
  await new Promise((r) => setTimeout(r, 3_000));
  expect(await usage()).toBe(COST_MICROS / 1e6);
  expect((await api(`/v2/billing/endpoints?endpointId=${SLUG}&bucketSize=day`, { key: caller })).body.records).toEqual([
    expect.objectContaining({ totalAmount: COST_MICROS / 1e6 }),
  ]);
  expect(cp.output()).not.toContain('charged by the sweep');
});
