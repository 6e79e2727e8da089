// WebSockets through the load-balancing gateway (docs/gateway.md, "WebSockets"): a real control plane
// with the gateway mounted, an in-process worker with a WebSocket server (the `ws` library) on its
// HTTP server, and `ws` clients. The upgrade passes the request guard and the balancer like any
// request; the worker completes the handshake and the gateway joins the two sockets (gateway/tunnel.ts).
// The same is then run through a real sshd test host's forwarded channels, as containers are reached.
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { startLocalLbWorld, type LocalLbWorld } from '../harness/lb-local.ts';
import { startTestHost, type TestHost } from '../../testing/index.ts';
import { waitFor } from '../harness/wait-for.ts';

/** A WebSocket server on the world's worker: echoes every frame, greets with the path it saw, picks `chat.v1`. */
function serveWebSockets(world: LocalLbWorld): { seen: IncomingHttpHeaders[]; sockets: WebSocket[]; close(): void } {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has('chat.v1') ? 'chat.v1' : false) });
  const seen: IncomingHttpHeaders[] = [];
  const sockets: WebSocket[] = [];
  world.servers[0]!.on('upgrade', (req, socket, head) => {
    seen.push(req.headers);
    if (req.url?.startsWith('/ws-refused')) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nno thanks');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws);
      ws.send(JSON.stringify({ hello: req.url }));
      ws.on('message', (data: RawData, isBinary: boolean) => ws.send(data, { binary: isBinary }));
    });
  });
  return {
    seen,
    sockets,
    close: () => {
      for (const s of wss.clients) s.terminate(); // the worker's HTTP server cannot close while one is open
      wss.close();
    },
  };
}

function wsUrl(world: LocalLbWorld, path: string): string {
  return `${world.cp.url.replace(/^http/, 'ws')}/v2/${world.endpointId}${path}`;
}

/** Opens a client; resolves once open, with every message it receives queued. */
async function connect(url: string, key: string | null, protocols: string[] = []): Promise<{ ws: WebSocket; next(): Promise<{ data: Buffer; binary: boolean }>; closed: Promise<number> }> {
  const ws = new WebSocket(url, protocols, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  const queue: { data: Buffer; binary: boolean }[] = [];
  const waiting: ((m: { data: Buffer; binary: boolean }) => void)[] = [];
  ws.on('message', (data: RawData, binary: boolean) => {
    const m = { data: Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]), binary };
    const w = waiting.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    closed,
    next: () => {
      const m = queue.shift();
      return m ? Promise.resolve(m) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** The HTTP answer to an upgrade that was not accepted: status and body. */
function refusal(url: string, key: string | null): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    ws.once('error', () => undefined); // the refusal is what is checked; ws reports it as an error too
  });
}

async function ready(world: LocalLbWorld): Promise<void> {
  await waitFor('the worker in rotation', async () => world.cp.services.workers.liveness.of(world.workerIds[0]!).check?.ready === true, 30_000, 50);
}

describe('WebSockets through the gateway (TCP to the worker)', () => {
  let world: LocalLbWorld;
  let worker: ReturnType<typeof serveWebSockets>;

  beforeAll(async () => {
    world = await startLocalLbWorld();
    worker = serveWebSockets(world);
    await ready(world);
  });
  afterAll(async () => {
    worker?.close();
    await world?.close();
  });

  test("the worker's handshake and subprotocol, text and binary frames both ways, the path as the worker sees it, the key not sent on", async () => {
    const c = await connect(wsUrl(world, '/ws?room=7'), world.key, ['chat.v2', 'chat.v1']);
    try {
      expect(c.ws.protocol).toBe('chat.v1'); // the worker's choice, not the gateway's
      expect(JSON.parse((await c.next()).data.toString())).toEqual({ hello: '/ws?room=7' });
      c.ws.send('text frame');
      expect(await c.next()).toEqual({ data: Buffer.from('text frame'), binary: false });
      const bytes = Buffer.from([0, 1, 2, 250, 255]);
      c.ws.send(bytes);
      expect(await c.next()).toEqual({ data: bytes, binary: true });
      const big = Buffer.alloc(3 * 1024 * 1024, 7); // larger than any socket buffer: back-pressure both ways
      c.ws.send(big);
      expect((await c.next()).data.equals(big)).toBe(true);
      const headers = worker.seen.at(-1)!;
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(headers.upgrade).toBe('websocket');
      expect(headers['sec-websocket-protocol']).toBe('chat.v2,chat.v1'); // as the client sent it
    } finally {
      c.ws.close();
    }
    expect(await c.closed).toBe(1005);
  });

  test('an open WebSocket is a request in flight on its worker; closing it ends that, counted as a 101 in the HTTP metrics', async () => {
    const tunnels = async (): Promise<number> => {
      const m = await world.cp.services.telemetry.registry.getSingleMetric('gpufleet_http_requests_total')!.get();
      return m.values.filter((v) => v.labels.status === '101').reduce((n, v) => n + v.value, 0);
    };
    // the tunnel of the test before is counted when its sockets have closed on the gateway's side too
    await waitFor('no request in flight', async () => world.cp.services.workers.requests.inFlightOn(world.workerIds[0]!) === 0, 5_000, 20);
    const before = await tunnels();
    const c = await connect(wsUrl(world, '/ws'), world.key);
    await c.next();
    expect(world.cp.services.workers.requests.inFlightOn(world.workerIds[0]!)).toBe(1);
    c.ws.close();
    await c.closed;
    await waitFor('no request in flight', async () => world.cp.services.workers.requests.inFlightOn(world.workerIds[0]!) === 0, 5_000, 20);
    expect(await tunnels()).toBe(before + 1);
  });

  test("refusals before the upgrade are HTTP answers: no key 401, another account's endpoint 404, the worker's own refusal as it sent it", async () => {
    const before = worker.seen.length;
    expect((await refusal(wsUrl(world, '/ws'), null)).status).toBe(401);
    const other = await world.cp.newAccount('read_write');
    expect((await refusal(wsUrl(world, '/ws'), other.key)).status).toBe(404);
    expect(worker.seen.length).toBe(before); // neither reached the worker
    expect(await refusal(wsUrl(world, '/ws-refused'), world.key)).toEqual({ status: 403, body: 'no thanks' });
    await waitFor('no request in flight', async () => world.cp.services.workers.requests.inFlightOn(world.workerIds[0]!) === 0, 5_000, 20);
  });

  test("the worker going away ends the caller's WebSocket, and the caller going away ends the worker's", async () => {
    const a = await connect(wsUrl(world, '/ws'), world.key);
    await a.next();
    worker.sockets.at(-1)!.terminate(); // the worker's socket is destroyed, no close frame
    expect(await a.closed).toBe(1006);

    const b = await connect(wsUrl(world, '/ws'), world.key);
    await b.next();
    const onWorker = worker.sockets.at(-1)!;
    const workerClosed = new Promise<number>((resolve) => onWorker.once('close', (code) => resolve(code)));
    b.ws.terminate();
    expect(await workerClosed).toBe(1006);
    await waitFor('no request in flight', async () => world.cp.services.workers.requests.inFlightOn(world.workerIds[0]!) === 0, 5_000, 20);
  });
});

describe('WebSockets through the gateway (SSH channels to the worker)', () => {
  let host: TestHost;
  let world: LocalLbWorld;
  let worker: ReturnType<typeof serveWebSockets>;

  beforeAll(async () => {
    host = await startTestHost({ name: `lb-ws-${process.pid}` });
    world = await startLocalLbWorld({ ssh: host });
    worker = serveWebSockets(world);
    await ready(world);
  });
  afterAll(async () => {
    worker?.close();
    await world?.close();
    await host?.dispose();
  });

  test('frames both ways over a forwarded channel; stopping the control plane ends the open WebSocket', async () => {
    const c = await connect(wsUrl(world, '/ws'), world.key, ['chat.v1']);
    expect(c.ws.protocol).toBe('chat.v1');
    expect(JSON.parse((await c.next()).data.toString())).toEqual({ hello: '/ws' });
    c.ws.send('over ssh');
    expect((await c.next()).data.toString()).toBe('over ssh');
    await world.cp.close();
    expect(await c.closed).toBe(1006);
  });
});
