// The HTTP side of the worker relay (api/jobs/worker-relay-server.ts, docs/serverless.md "Reaching the
// control plane") on a real control plane: connections are handed to services.workerRelay as the
// provisioner's SSH remote forward hands them (here from a plain TCP listener of the test, labelled
// with the host whose relay it plays), and spoken to with raw HTTP so every path is sent as written.
// Only worker protocol routes answer, with the worker's own token, for workers of that host only.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { Autoscaler } from '../../../core/index.ts';
import { isWorker, type WorkerPod } from '../../../model/index.ts';
import { markRelayed } from '../../../api/auth/relayed-requests.ts';
import { HEAD_DEADLINE_MS, MAX_UNPROVEN_PER_HOST } from '../../../api/jobs/worker-relay-server.ts';

let cp: TestControlPlane;
let relay: Server;
let relayPort = 0;
/** the host the next relayed connection comes through */
let via = 'host-a';
let user: { accountId: string; key: string };
let endpointId = '';
let worker: WorkerPod;
let token = '';

/** one raw HTTP/1.1 exchange through the relay: the status (0 when the connection was closed without an answer) and the body */
function raw(request: string, port = relayPort): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString('utf8')));
    s.on('error', () => undefined);
    s.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      resolve({ status, body: got.slice(got.indexOf('\r\n\r\n') + 4) });
    });
    s.setTimeout(10_000, () => reject(new Error(`no answer to ${request.split('\r\n')[0]}`)));
    s.write(request);
  });
}
const get = (path: string, headers: Record<string, string> = {}, port?: number) =>
  raw(`GET ${path} HTTP/1.1\r\nHost: cp.test\r\nConnection: close\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, port);

beforeAll(async () => {
  cp = await startTestControlPlane({ config: { workerPollMs: 300 } });
  await seedHosts(cp.services.store, [{ id: 'host-a', gpus: 1 }, { id: 'host-b', gpus: 1 }]);
  user = await cp.newAccount();
  const tpl = (await (await cp.api('/v2/templates', { key: user.key, method: 'POST', json: { name: 'relay', image: 'img', disk: 1, serverless: true } })).json()) as { id: string };
  const ep = await cp.api('/v1/endpoints', { key: user.key, method: 'POST', json: { templateId: tpl.id, name: 'relay', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 1, workersMax: 1 } });
  endpointId = ((await ep.json()) as { id: string }).id;
  // the autoscaler places the endpoint's one worker (no provisioner: nothing dials the hosts)
  const scaler = new Autoscaler(cp.services.workers, cp.services.store, cp.services.jobQueue);
  await scaler.tick();
  await scaler.stop();
  worker = (await cp.services.store.list('pods', { endpointId })).filter(isWorker)[0]!;
  token = cp.services.workers.containerEnv(worker).RUNPOD_AI_API_KEY!;
  relay = createServer((sock) => cp.services.workerRelay.accept(via, sock));
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  relayPort = (relay.address() as { port: number }).port;
});

afterAll(async () => {
  relay?.close();
  await cp?.close();
});

describe('the worker relay answers the worker protocol and nothing else', () => {
  test("a worker calls through its own host's relay with its token; without it, or with another's, it is refused", async () => {
    via = worker.hostId!;
    const ping = `/v2/${endpointId}/ping/${worker.id}?gpu=NVIDIA+H100+80GB+HBM3`;
    expect((await get(ping, { authorization: token })).status).toBe(200);
    expect((await get(ping)).status).toBe(401);
    expect((await get(ping, { authorization: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` })).status).toBe(401);
    expect((await get(ping, { authorization: `Bearer ${cp.adminKey}` })).status).toBe(401);
    // a job-take long poll with nothing queued answers 204 once its wait is over
    expect((await get(`/v2/${endpointId}/job-take/${worker.id}?job_in_progress=0`, { authorization: token })).status).toBe(204);
  });

  test("the same worker's call through another host's relay is 403: a container of another host cannot use it", async () => {
    via = worker.hostId === 'host-a' ? 'host-b' : 'host-a';
    const r = await get(`/v2/${endpointId}/ping/${worker.id}`, { authorization: token });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'FORBIDDEN' });
    via = worker.hostId!;
  });

  test('every other route of the API is 404 through the relay, with an operator key too', async () => {
    via = worker.hostId!;
    const admin = { authorization: `Bearer ${cp.adminKey}` };
    // the same requests answer on the API's own port (so a 404 below is the relay's doing)
    expect((await fetch(`${cp.url}/v2/pods`, { headers: admin })).status).toBe(200);
    for (const path of [
      '/v2/pods',
      '/healthz',
      '/',
      '/v2/docs',
      '/metrics',
      `/v2/${endpointId}/health`,
      `/v2/${endpointId}/status/x`,
      `/v1/endpoints/${endpointId}`,
      '/graphql?query=%7Bmyself%7Bid%7D%7D',
      // shapes that could decode or normalise into another route
      `/v2/${endpointId}/job-take/../../pods`,
      `/v2/${endpointId}/ping/%2e%2e/%2e%2e/pods`,
      `//v2/${endpointId}/ping/${worker.id}`,
      `/v2/${endpointId}/ping/${worker.id}/extra`,
      `http://cp.test/v2/${endpointId}/ping/${worker.id}`,
    ]) {
      const r = await get(path, admin);
      expect(r.status, path).toBe(404);
      expect(r.body, path).toContain('ROUTE_NOT_FOUND');
    }
    // a POST to a non-worker route, and a method the protocol does not use
    const post = await raw(`POST /v2/${endpointId}/run HTTP/1.1\r\nHost: cp.test\r\nAuthorization: Bearer ${cp.adminKey}\r\nContent-Type: application/json\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"input":{}}`);
    expect(post.status).toBe(404);
    expect((await raw(`DELETE /v2/${endpointId}/ping/${worker.id} HTTP/1.1\r\nHost: cp.test\r\nAuthorization: ${token}\r\nConnection: close\r\n\r\n`)).status).toBe(404);
    // no WebSocket (the exec and tunnel sockets): the connection is closed without an answer
    const up = await raw(`GET /v2/${endpointId}/ping/${worker.id} HTTP/1.1\r\nHost: cp.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: ${token}\r\n\r\n`);
    expect(up.status).toBe(0);
  });

  test('the gate alone, behind the path check: a relayed request routed to any route but the worker protocol is 404 before the key is looked at', async () => {
    // what the path check lets through is only worker paths; this serves every path as relayed, to
    // show the second line of defence (relayGate in api/server.ts) holds by itself
    const bare: HttpServer = createHttpServer((req, res) => {
      markRelayed(req, worker.hostId!);
      cp.app.routing(req, res);
    });
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    const port = (bare.address() as { port: number }).port;
    try {
      const admin = { authorization: `Bearer ${cp.adminKey}` };
      for (const path of ['/v2/pods', '/healthz', `/v2/${endpointId}/health`, '/v2/openapi.json']) expect((await get(path, admin, port)).status, path).toBe(404);
      expect((await get(`/v2/${endpointId}/ping/${worker.id}`, { authorization: token }, port)).status).toBe(200);
    } finally {
      bare.close();
    }
  });

  test("a worker that has not called names its host's relay while the relay is down, and not once it is back", async () => {
    // as the provisioner writes it once the container runs; the worker has not called yet
    await cp.services.store.transact(async (tx) => {
      const p = (await tx.get('pods', worker.id))!;
      tx.put('pods', { ...p, status: 'RUNNING', startedAt: new Date().toISOString(), worker: { ...(p as WorkerPod).worker, readyAt: null } });
    });
    const reason = async () => {
      const body = (await (await cp.api(`/v1/endpoints/${endpointId}?includeWorkers=true`, { key: user.key })).json()) as { workers: { id: string; statusReason: string | null }[] };
      return body.workers.find((w) => w.id === worker.id)!.statusReason;
    };
    cp.services.workerRelay.report(worker.hostId!, "docker-proxy (Docker's TCP proxy) is not on this host");
    expect(await reason()).toMatch(/^container running for \d+ s; waiting for the worker's first job-take or ping at http:\/\/host\.docker\.internal:\d+ \(its host's worker relay is down: docker-proxy \(Docker's TCP proxy\) is not on this host\)$/);
    cp.services.workerRelay.report(worker.hostId!, null);
    expect(await reason()).toMatch(/^container running for \d+ s; waiting for the worker's first job-take or ping at http:\/\/host\.docker\.internal:\d+$/);
  });

  /** `n` connections through the relay that send nothing, and how many of them are still open */
  async function silent(n: number): Promise<{ socks: Socket[]; open: () => number }> {
    const closed = new Set<Socket>();
    const socks = await Promise.all(
      Array.from({ length: n }, () => new Promise<Socket>((r) => {
        const s = connect(relayPort, '127.0.0.1', () => r(s));
        s.on('error', () => undefined);
        s.on('close', () => closed.add(s));
      })),
    );
    return { socks, open: () => socks.filter((s) => !closed.has(s)).length };
  }

  test(`connections that carried no worker token are held ${MAX_UNPROVEN_PER_HOST} at most: 300 silent ones do not keep a worker's job-take or its keep-alive connection out`, async () => {
    via = worker.hostId!;
    // the worker's keep-alive connection proves itself with a ping first
    const keep = connect(relayPort, '127.0.0.1');
    keep.on('error', () => undefined);
    let got = '';
    keep.on('data', (d) => (got += d.toString('utf8')));
    const ping = `GET /v2/${endpointId}/ping/${worker.id} HTTP/1.1\r\nHost: cp.test\r\nAuthorization: ${token}\r\n\r\n`;
    keep.write(ping);
    await waitFor('the ping answered 200', async () => /^HTTP\/1\.1 200/.test(got), 10_000, 50);
    // a tenant's pod on the host opens far more connections than any cap, with no token, and says nothing
    const flood = await silent(300);
    try {
      await waitFor(`at most ${MAX_UNPROVEN_PER_HOST} of them left open`, async () => flood.open() <= MAX_UNPROVEN_PER_HOST, 10_000, 50);
      // a new connection of the worker still gets its job-take answered (204: nothing queued)
      expect((await get(`/v2/${endpointId}/job-take/${worker.id}?job_in_progress=0`, { authorization: token })).status).toBe(204);
      // and its proven keep-alive connection was not the one closed to make room
      got = '';
      keep.write(ping);
      await waitFor('the ping answered 200', async () => /^HTTP\/1\.1 200/.test(got), 10_000, 50);
    } finally {
      for (const s of flood.socks) s.destroy();
      keep.destroy();
    }
  });

  test(`a connection that sends no complete request head is closed ${HEAD_DEADLINE_MS / 1000} s after it came`, async () => {
    via = worker.hostId!;
    const t0 = Date.now();
    const { socks, open } = await silent(1);
    // a request head begun and never finished is no better than silence
    socks[0]!.write(`GET /v2/${endpointId}/ping/${worker.id} HTTP/1.1\r\nHost: cp.test\r\n`);
    await waitFor('the half-sent connection closed', async () => open() === 0, HEAD_DEADLINE_MS + 10_000, 50);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(HEAD_DEADLINE_MS - 500);
  }, HEAD_DEADLINE_MS + 20_000);
});

