// Load-balancing endpoints end to end (issue 11; docs/gateway.md): the LB test worker image
// (worker-handlers/lb-test-server.ts) in containers the autoscaler starts on a real sshd test host,
// reached by the gateway through the host's SSH connection only (no published port), behind the
// control plane's API keys. Faults happen at the moment named: a worker's container is removed while
// a request is in flight; a worker never answers 200.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, FIXTURE_GPUS, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { ensureLbWorkerImage } from '../harness/worker-images.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';
import { loadBalancerGateway } from '../../gateway/index.ts';
import { isWorker } from '../../model/index.ts';

type J = Record<string, any>;
const GPU = 'NVIDIA H100 80GB HBM3';
const HOLD_MS = 12_000;
const REQUEST_TIMEOUT_MS = 4_000;
const DC = `dc-lb-${process.pid}`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let lbImage: string;
let ep: J;

const json = async (res: Response) => (await res.json()) as J;
const call = (path: string, init: RequestInit & { key?: string | null; raw?: boolean } = {}) => {
  const { key = alice.key, raw, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null) headers.set('authorization', raw ? key : `Bearer ${key}`);
  return fetch(cp.url + path, { ...rest, headers });
};
const liveWorkers = async (endpointId: string) =>
  (await cp.services.store.list('pods', { endpointId })).filter(isWorker).filter((p) => p.worker.retiredReason === null && p.desiredStatus === 'RUNNING');

async function lbEndpoint(name: string, env: Record<string, string> = {}, more: J = {}): Promise<J> {
  const tpl = await json(await cp.api('/v2/templates', { method: 'POST', key: alice.key, json: { name: `tpl-${name}`, image: lbImage, disk: 1, serverless: true, env: { PORT: '8000' }, ports: ['8000/http'] } }));
  const res = await cp.api('/v1/endpoints', {
    method: 'POST',
    key: alice.key,
    json: { templateId: tpl.id, name, type: 'LOAD_BALANCER', gpuTypeIds: [GPU], workersMin: 0, workersMax: 2, idleTimeout: 120, scalerType: 'REQUEST_COUNT', scalerValue: 4, dataCenterIds: [DC], env, ...more },
  });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

beforeAll(async () => {
  [lbImage] = await Promise.all([ensureLbWorkerImage(), ensureTestImage()]);
  host = await startTestHost({ name: `lb-${process.pid}`, gpus: [0, 1, 2, 3].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({
    background: [provisioner()],
    reconcileIntervalMs: 300,
    mounts: [loadBalancerGateway({ holdMs: HOLD_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, healthChecks: { intervalMs: 200 } })],
  });
  hostId = await enrolTestHost(cp, host, { dataCenterId: DC });
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  ep = await lbEndpoint('lb-main');
});

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('a load-balancing endpoint', () => {
  test('its record shows requestUrls {base, health}, v1 and v2', async () => {
    const v1 = await json(await cp.api(`/v1/endpoints/${ep.id}`, { key: alice.key }));
    expect(v1.requestUrls).toEqual({ base: `${cp.url}/v2/${ep.id}`, health: `${cp.url}/v2/${ep.id}/ping` });
    const v2 = await json(await cp.api(`/v2/serverless/${ep.id}`, { key: alice.key }));
    expect(v2.requestUrls).toEqual(v1.requestUrls);
  });

  test('scales from zero: the first request is held until a worker answers 200, then passes through with method, path, query, headers and body', async () => {
    expect(await liveWorkers(ep.id)).toHaveLength(0);
    const t0 = Date.now();
    const res = await call(`/v2/${ep.id}/echo/a%20b?q=1&x=%2F&api_key=${alice.key}`, {
      method: 'PUT',
      headers: { 'x-test': 'yes', 'content-type': 'text/plain', 'x-api-key': alice.key },
      body: 'hello worker',
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    console.log(`cold start through the gateway: ${Date.now() - t0} ms`);
    expect(body).toMatchObject({ method: 'PUT', path: '/echo/a%20b', url: '/echo/a%20b?q=1&x=%2F', body: 'hello worker' });
    expect(body.headers['x-test']).toBe('yes');
    expect(body.headers['content-type']).toBe('text/plain');
    expect(res.headers.get('x-worker')).toBe(body.worker);
    // the caller's key reaches no worker, in any form
    expect(JSON.stringify(body)).not.toContain(alice.key);
    expect(body.headers.authorization).toBeUndefined();
    expect((await liveWorkers(ep.id)).map((w) => w.id)).toEqual([body.worker]);
  });

  test('the bare key (Authorization: <key>) is taken and not forwarded either; a POST body and JSON pass unchanged', async () => {
    const res = await call(`/v2/${ep.id}/echo`, { raw: true, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": [1, 2]}' });
    const body = await json(res);
    expect(res.status).toBe(200);
    expect(body.body).toBe('{"a": [1, 2]}');
    expect(body.headers.authorization).toBeUndefined();
  });

  test("every path is the worker's: /run, /health and /ping reach it (the queue verbs do not apply)", async () => {
    const run = await call(`/v2/${ep.id}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":{}}' });
    expect(run.status).toBe(404);
    expect(await run.text()).toBe('not found'); // the worker's own answer, not the job interface's
    const ping = await call(`/v2/${ep.id}/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({ status: 'healthy' });
    const echo = await json(await call(`/v2/${ep.id}/echo`)); // GET, no body
    expect(echo).toMatchObject({ method: 'GET', bytes: 0 });
  });

  test('the caller is checked first: no key 401, a read-only key 403, another account 404', async () => {
    expect((await call(`/v2/${ep.id}/echo`, { key: null })).status).toBe(401);
    const ro = await cp.newAccount('read');
    expect((await call(`/v2/${ep.id}/echo`, { key: ro.key })).status).toBe(403);
    const other = await call(`/v2/${ep.id}/echo`, { key: bob.key });
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
  });

  test('server-sent events stream through: the first event arrives long before the answer ends', async () => {
    const t0 = Date.now();
    const res = await call(`/v2/${ep.id}/sse?n=3&gapMs=1500`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now() - t0;
    expect(new TextDecoder().decode(first.value)).toContain('data: {"i":0');
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const endAt = Date.now() - t0;
    expect(text.match(/^data: /gm)).toHaveLength(3);
    expect(firstAt).toBeLessThan(1_000);
    expect(endAt - firstAt).toBeGreaterThan(2_500);
  });

  test('the workers are listed with their state, in rotation (IDLE)', async () => {
    const list = await json(await cp.api(`/v2/serverless/${ep.id}/workers`, { key: alice.key }));
    expect(list.workers).toHaveLength(1);
    expect(list.workers[0]).toMatchObject({ status: 'IDLE' });
  });

  test('a body over 30 MB is refused with 413, declared or streamed', async () => {
    const big = new Uint8Array(30_000_001);
    const declared = await call(`/v2/${ep.id}/echo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: big });
    expect(declared.status).toBe(413);
    expect((await json(declared)).code).toBe('PAYLOAD_TOO_LARGE');
    const chunk = new Uint8Array(1 << 20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > 31 << 20) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const streamed = await call(`/v2/${ep.id}/echo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: stream, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    // just under the limit passes
    const ok = await json(await call(`/v2/${ep.id}/echo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(29_000_000) }));
    expect(ok.bytes).toBe(29_000_000);
  });

  test('a worker that does not answer within the time per request: 504', async () => {
    const t0 = Date.now();
    const res = await call(`/v2/${ep.id}/slow?ms=${REQUEST_TIMEOUT_MS + 3_000}`);
    expect(res.status).toBe(504);
    expect((await json(res)).code).toBe('GATEWAY_TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
  });

  test("another tenant's pod cannot reach the worker; nothing is published on the host", async () => {
    const [w] = await liveWorkers(ep.id);
    const c = (await dockerInspect(`gpufleet-${w!.id}`))!;
    const ip = Object.values(c.NetworkSettings.Networks as Record<string, { IPAddress: string }>)[0]!.IPAddress;
    // the template names 8000/http, yet a load-balancing worker publishes no port
    expect(Object.values((c.NetworkSettings as J).Ports ?? {}).flat().filter(Boolean)).toEqual([]);
    const sleeper = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
    const pod = async (who: { key: string }, name: string) => {
      const res = await cp.api('/v2/pods', { method: 'POST', key: who.key, json: { name, image: 'gpufleet-test/busybox:latest', args: sleeper, disk: 1, gpu: { id: GPU }, dataCenterIds: [DC] } });
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(201);
      return waitFor(`pod ${name} RUNNING`, async () => ((await json(await cp.api(`/v2/pods/${body.id}`, { key: who.key }))).status === 'RUNNING' ? body.id : null), 30_000);
    };
    const reach = async (podId: string): Promise<boolean> => {
      const script = 'printf "GET /ping HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$1" 8000';
      const out = await runDocker(['exec', `gpufleet-${podId}`, 'sh', '-c', script, 'sh', ip], { timeoutMs: 15_000 }).then((r) => r.stdout, () => '');
      return /^HTTP\/1\.\d 200 /.test(out);
    };
    const bobPod = await pod(bob, 'bob-probe');
    const alicePod = await pod(alice, 'alice-probe');
    // the probe works (a pod of the worker's own account shares its network)...
    expect(await reach(alicePod)).toBe(true);
    // ...and another account's pod on the same host gets nothing
    expect(await reach(bobPod)).toBe(false);
    for (const [who, id] of [[bob, bobPod], [alice, alicePod]] as const)
      await cp.api(`/v2/pods/${id}/action`, { method: 'POST', key: who.key, json: { action: 'terminate' } });
  });

  test('a worker removed mid-request: the caller gets a clean 502 at once, not a hang', async () => {
    const [w] = await liveWorkers(ep.id);
    const t0 = Date.now();
    // when the answer's head arrived, not when `docker rm -f` (which removes the storage too) returned
    const pending = call(`/v2/${ep.id}/slow?ms=3000`).then((res) => ({ res, at: Date.now() }));
    // it is in flight on that worker now
    await waitFor('the request in flight on the worker', async () => cp.services.workers.requests.inFlightOn(w!.id) === 1, 2_000, 10);
    await runDocker(['rm', '-f', `gpufleet-${w!.id}`]);
    const { res, at } = await pending;
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(502);
    expect(body.code).toBe('BAD_GATEWAY');
    expect(at - t0).toBeLessThan(2_900); // before the worker would have answered
    // the endpoint serves again once the worker is back (the provisioner runs its container anew) or replaced
    await waitFor('the endpoint serving again', async () => (await call(`/v2/${ep.id}/echo`)).status === 200, 30_000);
  });
});

describe('a load-balancing endpoint on the documented default port 80 (no PORT, no ports)', () => {
  test('its worker is health-checked and reached on port 80 through the gateway (was: forwarded to port 0, never ready)', async () => {
    const tpl = await json(await cp.api('/v2/templates', { method: 'POST', key: alice.key, json: { name: 'tpl-lb-port80', image: lbImage, disk: 1, serverless: true } }));
    expect(tpl.env ?? {}).not.toHaveProperty('PORT');
    const res = await cp.api('/v1/endpoints', {
      method: 'POST',
      key: alice.key,
      json: { templateId: tpl.id, name: 'lb-port80', type: 'LOAD_BALANCER', gpuTypeIds: [GPU], workersMin: 0, workersMax: 1, idleTimeout: 120, scalerType: 'REQUEST_COUNT', scalerValue: 4, dataCenterIds: [DC] },
    });
    const p80 = await json(res);
    expect(res.status, JSON.stringify(p80)).toBe(200);
    const echo = await call(`/v2/${p80.id}/echo?via=80`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'on eighty' });
    const body = await json(echo);
    expect(echo.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ method: 'POST', url: '/echo?via=80', body: 'on eighty' });
    // the worker answered on 80 (its server listens on PORT, default 80; nothing else listens in it)
    const [w] = await liveWorkers(p80.id);
    expect(body.worker).toBe(w!.id);
    const listening = await runDocker(['exec', `gpufleet-${w!.id}`, 'sh', '-c', 'cat /proc/net/tcp /proc/net/tcp6 2>/dev/null'], { timeoutMs: 15_000 }).then((r) => r.stdout, () => '');
    expect(listening).toMatch(/:0050 [0-9A-F]+:0000 0A/); // 0x50 = 80, state 0A = LISTEN
    expect(listening).not.toMatch(/:1F40 [0-9A-F]+:0000 0A/); // nothing on 8000
    const workers = await json(await cp.api(`/v2/serverless/${p80.id}/workers`, { key: alice.key }));
    expect(workers.workers).toHaveLength(1);
    expect(workers.workers[0]).toMatchObject({ status: 'IDLE' });
    await cp.api(`/v1/endpoints/${p80.id}`, { method: 'DELETE', key: alice.key });
  });
});

describe('a load-balancing endpoint whose worker never becomes ready', () => {
  test('the request is held for the hold, then refused with 503 problem+json; the worker shows INITIALIZING', async () => {
    const never = await lbEndpoint('lb-never', { GPUFLEET_TEST_NEVER_READY: 'true' });
    const t0 = Date.now();
    const res = await call(`/v2/${never.id}/echo`);
    const body = await json(res);
    const held = Date.now() - t0;
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(body.code).toBe('UNAVAILABLE');
    expect(held).toBeGreaterThanOrEqual(HOLD_MS - 100);
    expect(held).toBeLessThan(HOLD_MS + 3_000);
    // a worker was started for it, and answers 204: it stays out of rotation
    const workers = await json(await cp.api(`/v2/serverless/${never.id}/workers`, { key: alice.key }));
    expect(workers.workers).toHaveLength(1);
    expect(workers.workers[0]).toMatchObject({ status: 'INITIALIZING' });
    expect(workers.workers[0].statusReason).toMatch(/GET \/ping on port 8000 answered 204/);
  });
});
