// Serverless on one machine with `npm start` defaults (docs/serverless.md, "Reaching the control
// plane"): `gpufleet serve` as a child process with HOST=127.0.0.1 and no GPUFLEET_WORKER_URL, a real
// sshd test host with this machine's Docker engine, and an endpoint on the unmodified runpod-python
// worker image. The worker calls http://host.docker.internal:<port> as ever; what answers there is the
// host's relay (docker-proxy on the bridge address → the SSH remote forward → the control plane).
// A queue job completes; from a container on the host only the worker routes answer; the relay comes
// back when its SSH connection is cut and when the control plane is SIGKILLed and started again.
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, spawnedAdminApi, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, dockerInspect, enrolTestHost, FIXTURE_GPUS, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { ensurePythonWorkerImage } from '../harness/worker-images.ts';
import { waitFor } from '../harness/wait-for.ts';

let h: TestHost;
let dataDir = '';
let port = 0;
let gateway = '';
let cp: SpawnedControlPlane | null = null;
let hostId = '';
let image = '';
let endpointId = '';
const api = spawnedAdminApi(() => cp);

// what `npm start` gets: HOST=127.0.0.1 (the harness's default) and neither GPUFLEET_WORKER_URL nor GPUFLEET_WORKER_RELAY
const spawn = async () =>
  (cp = await spawnControlPlane({ dataDir, port, startTimeoutMs: 90_000, env: { GPUFLEET_WORKER_URL: '', GPUFLEET_WORKER_RELAY: '', GPUFLEET_RECONCILE_INTERVAL_MS: '300' } }));

/** pids of docker-proxy processes relaying this control plane's port (the relay's host side) */
async function relayProxies(): Promise<number[]> {
  const pids: number[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const args = (await readFile(`/proc/${d}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (path.basename(args[0] ?? '') === 'docker-proxy' && args.includes('-host-port') && args[args.indexOf('-host-port') + 1] === String(port)) pids.push(Number(d));
  }
  return pids;
}
const parentOf = async (pid: number) => Number((await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ')[1]);
const commandOf = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ').trim();

async function runJob(input: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await api(`/v2/${endpointId}/run`, { method: 'POST', json: { input } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return waitFor(
    `job ${r.body!.id} final`,
    async () => {
      const s = (await api(`/v2/${endpointId}/status/${r.body!.id}`)).body!;
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s.status as string) ? s : null;
    },
    180_000,
    200,
  );
}
async function theWorker(): Promise<{ id: string; token: string; network: string }> {
  const shown = await api(`/v1/endpoints/${endpointId}?includeWorkers=true`);
  const id = (shown.body!.workers as { id: string }[])[0]!.id;
  const c = (await dockerInspect(`gpufleet-${id}`))!;
  const env = new Map((c.Config.Env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  expect(env.get('RUNPOD_WEBHOOK_GET_JOB')!.startsWith(`http://host.docker.internal:${port}/v2/${endpointId}/job-take/${id}?`)).toBe(true);
  return { id, token: env.get('RUNPOD_AI_API_KEY')!, network: Object.keys((c.NetworkSettings.Networks ?? {}) as Record<string, unknown>)[0]! };
}

beforeAll(async () => {
  image = await ensurePythonWorkerImage();
  gateway = await dockerBridgeGateway();
  h = await startTestHost({ name: `relay-e2e-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-relay-e2e-'));
  port = await freePort();
  await spawn();
  hostId = await enrolTestHost(cp!, h, { dataCenterId: 'dc-relay' });
  const tpl = await api('/v2/templates', { method: 'POST', json: { name: 'python-worker', image, disk: 1, serverless: true } });
  expect(tpl.status, JSON.stringify(tpl.body)).toBeLessThan(300);
  const ep = await api('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.body!.id, name: 'relay', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 600 },
  });
  expect(ep.status, JSON.stringify(ep.body)).toBe(200);
  endpointId = ep.body!.id as string;
}, 600_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host: h, hostId });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('with HOST=127.0.0.1 and no GPUFLEET_WORKER_URL a queue job is COMPLETED by a runpod-python worker on the host; `serve` printed the next steps', async () => {
  expect(cp!.output()).toContain(`gpufleet is listening on http://127.0.0.1:${port}; API docs: http://127.0.0.1:${port}/v2/docs`);
  expect(cp!.output()).toContain('npx gpufleet hosts enroll root@<host>');
  expect(cp!.output()).not.toContain('GPUFLEET_WORKER_URL is not set');
  const t0 = Date.now();
  const done = await runJob({ output: { hello: 'through the relay' } });
  expect(done).toMatchObject({ status: 'COMPLETED', output: { hello: 'through the relay' } });
  console.log(`[worker-relay-e2e] queue job from zero workers to COMPLETED through the relay: ${Date.now() - t0} ms`);
  await theWorker();
  // the control plane listens on loopback only: what answers on the bridge address is the relay, which serves no API route
  expect(await relayProxies()).toHaveLength(1);
  const direct = await fetch(`http://${gateway}:${port}/healthz`);
  expect(direct.status).toBe(404);
  expect(await direct.text()).toContain('ROUTE_NOT_FOUND');
});

test('from a container on the account network, host.docker.internal answers the worker routes (with the worker token) and no other route of the API', async () => {
  const w = await theWorker();
  const script = `
import http.client, json, sys
key, token, ep, w = sys.argv[1:5]
def call(method, path, auth=None, body=None):
    c = http.client.HTTPConnection("host.docker.internal", ${port}, timeout=20)
    headers = {"Authorization": auth} if auth else {}
    if body is not None: headers["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=headers)
    return c.getresponse().status
admin = "Bearer " + key
print(json.dumps({
  "pods": call("GET", "/v2/pods", admin),
  "healthz": call("GET", "/healthz"),
  "root": call("GET", "/"),
  "graphql": call("POST", "/graphql", admin, json.dumps({"query": "{ myself { id } }"})),
  "health": call("GET", "/v2/%s/health" % ep, admin),
  "run": call("POST", "/v2/%s/run" % ep, admin, json.dumps({"input": {}})),
  "dotdot": call("GET", "/v2/%s/job-take/../../pods" % ep, admin),
  "hosts": call("GET", "/v2/hosts", admin),
  "pingNoToken": call("GET", "/v2/%s/ping/%s" % (ep, w)),
  "pingAdminKey": call("GET", "/v2/%s/ping/%s" % (ep, w), admin),
  "ping": call("GET", "/v2/%s/ping/%s?gpu=x" % (ep, w), token),
}))
`;
  const { stdout } = await runDocker([
    'run', '--rm', '--network', w.network, '--add-host=host.docker.internal:host-gateway', '--label', `gpufleet.host=${hostId}`,
    '--entrypoint', 'python3', image, '-c', script, cp!.adminKey, w.token, endpointId, w.id,
  ]);
  const got = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
  expect(got).toEqual({
    pods: 404, healthz: 404, root: 404, graphql: 404, health: 404, run: 404, dotdot: 404, hosts: 404,
    pingNoToken: 401, pingAdminKey: 401, ping: 200,
  });
});

test("the relay's SSH connection cut (its sshd session killed): the forward and the proxy are back, and the next job completes", async () => {
  const [old] = await relayProxies();
  expect(old).toBeDefined();
  // docker-proxy ← the relay script's shell ← sshd's session process of that connection
  let session = await parentOf(old!);
  while (session > 1 && !(await commandOf(session)).startsWith('sshd:')) session = await parentOf(session);
  expect(await commandOf(session)).toMatch(/^sshd: root/);
  process.kill(session, 'SIGKILL');
  const back = await waitFor('a new relay proxy', async () => {
    const now = await relayProxies();
    return now.length === 1 && now[0] !== old ? now[0] : null;
  }, 30_000, 100);
  expect(await runJob({ output: { after: 'reconnect' } })).toMatchObject({ status: 'COMPLETED', output: { after: 'reconnect' } });
});

test('the control plane SIGKILLed and started again: the old proxy goes with its connection, a new relay serves the same worker container', async () => {
  const before = await theWorker();
  const [old] = await relayProxies();
  await cp!.kill('SIGKILL');
  await waitFor('the old proxy gone with its SSH connection', async () => !(await relayProxies()).includes(old!), 15_000, 100);
  await spawn();
  const done = await runJob({ output: { after: 'restart' } });
  expect(done).toMatchObject({ status: 'COMPLETED', output: { after: 'restart' } });
  expect(done.workerId).toBe(before.id);
  expect(await relayProxies()).toHaveLength(1);
});
