// The worker side end to end on real parts: sshd test hosts, the real Docker engine, the control
// plane with its provisioner and autoscaler, the real job queue. The containers here run no worker
// (a sleeper, or a command that crashes): the test speaks for the worker through the WorkerDirectory
// and the queue, the level this side owns; runsync-e2e.test.ts runs real workers over HTTP.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import {
  dockerBridgeGateway,
  dockerInspect,
  ensureTestImage,
  FIXTURE_GPUS,
  listContainers,
  removeContainersByLabel,
  removeNetworksByLabel,
  startTestHost,
  type TestHost,
} from '../../harness/index.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { tenantNetworkName } from '../../../provisioner/tenant-network.ts';
import { isWorker, type WorkerPod } from '../../../model/index.ts';
import { waitFor as waitForHarness } from '../../harness/wait-for.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
let cp: TestControlPlane;
let hostA: TestHost;
let hostB: TestHost;
const hostIds: Record<string, string> = {};
let user: { accountId: string; key: string };
let sleeperTemplate: string;
let image: string;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 150);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });
const json = async (res: Response) => (await res.json()) as Record<string, any>;

async function enroll(h: TestHost): Promise<string> {
  const res = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:${h.port}`, privateKey: h.privateKey, dataCenterId: 'dc-sls' } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id as string;
}
async function template(name: string, args: string): Promise<string> {
  const res = await asUser('/v2/templates', { method: 'POST', json: { name, image, args, disk: 1, serverless: true } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id as string;
}
async function endpoint(body: Record<string, unknown>): Promise<string> {
  const res = await asUser('/v1/endpoints', { method: 'POST', json: { gpuTypeIds: [H100], ...body } });
  const e = await json(res);
  expect(res.status, JSON.stringify(e)).toBe(200);
  endpoints.push(e.id as string);
  return e.id as string;
}
const workerRecords = async (endpointId: string) =>
  (await cp.services.store.list('pods', { endpointId })).filter(isWorker).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
const inService = async (endpointId: string) => (await workerRecords(endpointId)).filter((w) => w.worker.retiredReason === null && w.desiredStatus === 'RUNNING');
const running = async (endpointId: string, n: number) =>
  waitFor(`${n} running worker container(s) of ${endpointId}`, async () => {
    const ws = (await inService(endpointId)).filter((w) => w.status === 'RUNNING');
    if (ws.length !== n) return null;
    for (const w of ws) if (!(await dockerInspect(`gpufleet-${w.id}`))?.State.Running) return null;
    return ws;
  });
const containersOf = async (endpointId: string) => {
  const ids = new Set((await workerRecords(endpointId)).map((w) => w.id));
  return (await listContainers('gpufleet.pod')).filter((c) => ids.has(c.Config.Labels?.['gpufleet.pod'] ?? ''));
};
/** deletes the endpoint and waits for its containers to go, so a failed test leaves the next its GPUs */
async function removeEndpoint(ep: string): Promise<void> {
  const res = await asUser(`/v1/endpoints/${ep}`, { method: 'DELETE' });
  expect([204, 404]).toContain(res.status);
  await waitFor(`no container of ${ep} left`, async () => (await containersOf(ep)).length === 0, 20_000);
}
const endpoints: string[] = [];
const tokenOf = (w: WorkerPod) => cp.services.workers.containerEnv(w).RUNPOD_AI_API_KEY!;
/** what a worker's job-take and job-done do, through the same ports the protocol routes use */
async function workLikeAWorker(w: WorkerPod, endpointId: string): Promise<string> {
  await cp.services.workers.seen(w.id, { healthy: true, inProgress: [] });
  const [job] = await cp.services.jobQueue.take(endpointId, w.id, { waitMs: 5_000 });
  expect(job, `worker ${w.id} got no job`).toBeDefined();
  await cp.services.workers.seen(w.id, { healthy: true, inProgress: [job!.id] });
  return job!.id;
}

beforeAll(async () => {
  image = await ensureTestImage();
  hostA = await startTestHost({ name: `sls-a-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  hostB = await startTestHost({ name: `sls-b-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  // containers reach the host at host.docker.internal (docker0): the control plane listens there
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostIds.a = await enroll(hostA);
  hostIds.b = await enroll(hostB);
  user = await cp.newAccount();
  sleeperTemplate = await template('sleeper', SLEEPER);
});

// a test that failed half-way still gives its GPUs back to the next
afterEach(async () => {
  for (const ep of endpoints.splice(0)) await removeEndpoint(ep).catch(() => undefined);
});

afterAll(async () => {
  await cp?.close();
  for (const id of Object.values(hostIds)) {
    await removeContainersByLabel(`gpufleet.host=${id}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${id}`).catch(() => undefined);
  }
  await hostA?.dispose();
  await hostB?.dispose();
});

describe('workers as containers on test hosts', () => {
  test('a queued job starts a worker container from zero, with the protocol env (URLs with "?", its id, its token) on the account network', async () => {
    const ep = await endpoint({ templateId: sleeperTemplate, name: 'env-check', workersMax: 1, idleTimeout: 600 });
    await sleep(800);
    expect(await workerRecords(ep)).toHaveLength(0);
    const t0 = Date.now();
    await cp.services.jobQueue.enqueue({ endpointId: ep, accountId: user.accountId, input: { x: 1 }, sync: false });
    const [w] = await running(ep, 1);
    const startedIn = Date.now() - t0;
    const c = (await dockerInspect(`gpufleet-${w!.id}`))!;
    const env = new Map((c.Config.Env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const origin = `http://host.docker.internal:${new URL(cp.url).port}`;
    const q = '?gpu=NVIDIA+H100+80GB+HBM3';
    expect(env.get('RUNPOD_WEBHOOK_GET_JOB')).toBe(`${origin}/v2/${ep}/job-take/${w!.id}${q}`);
    expect(env.get('RUNPOD_WEBHOOK_POST_OUTPUT')).toBe(`${origin}/v2/${ep}/job-done/$RUNPOD_POD_ID/$ID${q}`);
    expect(env.get('RUNPOD_WEBHOOK_POST_STREAM')).toBe(`${origin}/v2/${ep}/job-stream/$RUNPOD_POD_ID/$ID${q}`);
    expect(env.get('RUNPOD_WEBHOOK_PING')).toBe(`${origin}/v2/${ep}/ping/$RUNPOD_POD_ID${q}`);
    expect(env.get('RUNPOD_POD_ID')).toBe(w!.id);
    expect(env.get('RUNPOD_ENDPOINT_ID')).toBe(ep);
    const token = env.get('RUNPOD_AI_API_KEY')!;
    expect(await cp.services.workers.authenticate(token)).toEqual({ workerId: w!.id, endpointId: ep, accountId: user.accountId, hostId: w!.hostId });
    expect(Object.keys((c.NetworkSettings.Networks ?? {}) as Record<string, unknown>)).toEqual([tenantNetworkName(w!.hostId!, user.accountId)]);
    // the token is nowhere the API answers, nor in clear anywhere in the data directory
    const answers = await Promise.all([
      asUser(`/v1/endpoints/${ep}?includeWorkers=true`).then((r) => r.text()),
      asUser('/v1/endpoints?includeWorkers=true').then((r) => r.text()),
      asUser('/v2/pods?includeTerminated=true').then((r) => r.text()),
    ]);
    for (const a of answers) expect(a).not.toContain(token);
    const listed = await json(await asUser(`/v1/endpoints/${ep}?includeWorkers=true`));
    expect(listed.workers).toEqual([expect.objectContaining({ id: w!.id, status: 'INITIALIZING', machineId: w!.hostId, gpu: { id: H100, count: 1 } })]);
    for (const f of await readdir(cp.dataDir, { recursive: true })) {
      const file = path.join(cp.dataDir, f);
      const text = await readFile(file, 'utf8').catch(() => '');
      expect(text.includes(token), file).toBe(false);
    }
    console.log(`[workers-on-hosts] enqueue → worker container running on a test host: ${startedIn} ms`);
    await removeEndpoint(ep);
  });

  test('an idle worker stops after idleTimeout, never below workersMin; workers are not pods and bill to the endpoint', async () => {
    const ep = await endpoint({ templateId: sleeperTemplate, name: 'scale', workersMin: 1, workersMax: 2, idleTimeout: 2, scalerType: 'REQUEST_COUNT', scalerValue: 1 });
    const [first] = await running(ep, 1); // workersMin, with no job
    for (let i = 0; i < 2; i++) await cp.services.jobQueue.enqueue({ endpointId: ep, accountId: user.accountId, input: { i }, sync: false });
    const two = await running(ep, 2);
    expect(two.map((w) => w.id)).toContain(first!.id);
    // the pod interface does not show them; billing shows them under the endpoint
    const pods = await json(await asUser('/v2/pods?includeTerminated=true'));
    expect(pods.pods.map((p: { id: string }) => p.id)).toEqual([]);
    expect((await asUser(`/v2/pods/${first!.id}`)).status).toBe(404);
    const gql = await json(await asUser('/graphql', { method: 'POST', json: { query: '{ myself { pods { id } } }' } }));
    expect(gql.errors).toBeUndefined();
    expect(gql.data.myself.pods).toEqual([]);
    // each works one job and reports itself idle
    for (const w of two) {
      const jobId = await workLikeAWorker(w, ep);
      await cp.services.jobQueue.complete(jobId, w.id, { output: 'ok' });
      await cp.services.workers.seen(w.id, { healthy: true, inProgress: [] });
    }
    const idleAt = Date.now();
    await waitFor('one worker stopped for idleness', async () => (await containersOf(ep)).length === 1, 15_000);
    expect(Date.now() - idleAt).toBeGreaterThanOrEqual(2_000);
    const retired = (await workerRecords(ep)).filter((w) => w.worker.retiredReason !== null);
    expect(retired.map((w) => w.worker.retiredReason)).toEqual([expect.stringMatching(/^idle for \d+ s \(idleTimeout 2 s\)$/)]);
    await sleep(4_000);
    expect(await inService(ep)).toHaveLength(1);
    expect(await containersOf(ep)).toHaveLength(1);
    const bill = await json(await asUser(`/v2/billing/endpoints?endpointId=${ep}&bucketSize=hour`));
    expect(bill.records.length).toBeGreaterThan(0);
    expect(bill.records.every((r: { endpointId: string }) => r.endpointId === ep)).toBe(true);
    expect(bill.metadata.totals.totalAmount).toBeGreaterThan(0);
    expect((await json(await asUser('/v2/billing/pods?bucketSize=hour'))).records).toEqual([]);
    // workersMin 0: the last one goes too
    expect((await asUser(`/v1/endpoints/${ep}`, { method: 'PATCH', json: { workersMin: 0 } })).status).toBe(200);
    await waitFor('no worker container left', async () => (await containersOf(ep)).length === 0, 15_000);
    await removeEndpoint(ep);
  });

  test('a crashing worker is replaced only after a backoff that doubles, is never fed, and the endpoint says why', async () => {
    const crash = await template('crasher', `sh -c 'echo boom-on-start >&2; exit 3'`);
    const ep = await endpoint({ templateId: crash, name: 'crashy', workersMin: 1, workersMax: 1 });
    const first = await waitFor('the first worker retired', async () => (await workerRecords(ep)).find((w) => w.worker.retiredReason !== null), 20_000);
    expect(first.worker.failed).toBe(true);
    expect(first.worker.retiredReason).toMatch(/exit code 3/);
    expect(first.worker.retiredReason).toContain('boom-on-start');
    expect(await cp.services.workers.authenticate(tokenOf(first))).toBeNull();
    const shown = await json(await asUser(`/v1/endpoints/${ep}?includeWorkers=true`));
    expect(shown.statusReason).toMatch(/new workers wait until .* after 1 worker fault\(s\).*boom-on-start/);
    expect(shown.workers).toEqual([expect.objectContaining({ id: first.id, status: 'UNHEALTHY' })]);
    // watch the replacements for a while: 5 s after the first fault, then 10 s after the second
    await sleep(14_000);
    const all = await workerRecords(ep);
    const starts = all.map((w) => Date.parse(w.createdAt));
    const faults = all.map((w) => Date.parse(w.terminatedAt ?? '') || Infinity);
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all.length).toBeLessThanOrEqual(3);
    expect(starts[1]! - faults[0]!).toBeGreaterThanOrEqual(5_000);
    if (all.length === 3) expect(starts[2]! - faults[1]!).toBeGreaterThanOrEqual(10_000);
    await removeEndpoint(ep);
  });

  test("a lost host: its worker's job goes back to the queue (workerLost) and the worker is replaced on another host", async () => {
    const ep = await endpoint({ templateId: sleeperTemplate, name: 'host-loss', workersMax: 1, idleTimeout: 600 });
    const job = await cp.services.jobQueue.enqueue({ endpointId: ep, accountId: user.accountId, input: {}, sync: false });
    const [w1] = await running(ep, 1);
    expect(await workLikeAWorker(w1!, ep)).toBe(job.id);
    const lost = w1!.hostId === hostIds.a ? hostA : hostB;
    const other = w1!.hostId === hostIds.a ? hostIds.b : hostIds.a;
    await lost.stop();
    try {
      const back = await waitFor('the job back in the queue', async () => {
        const j = await cp.services.jobQueue.get(job.id);
        return j && j.retries === 1 ? j : null;
      });
      expect(['IN_QUEUE', 'IN_PROGRESS']).toContain(back.status);
      const r1 = (await cp.services.store.get('pods', w1!.id))!;
      expect(r1.worker!.retiredReason).toMatch(new RegExp(`^host ${w1!.hostId} is unreachable`));
      const [w2] = await running(ep, 1);
      expect(w2!.hostId).toBe(other);
      expect((await dockerInspect(`gpufleet-${w2!.id}`))?.Config.Labels?.['gpufleet.host']).toBe(other);
      // the requeued job goes to the replacement
      expect(await workLikeAWorker(w2!, ep)).toBe(job.id);
    } finally {
      await lost.start();
    }
    await removeEndpoint(ep);
  });
});
