// The HTTP side of the worker relay (docs/serverless.md, "Reaching the control plane"): connections
// that came through a host's relay (provisioner/worker-relay.ts, an SSH remote forward) are served
// by a server of their own that knows which host carried them, and answers the worker protocol
// routes and nothing else, three times over:
// 1. the request line must be a worker protocol path (GET/POST `/v2/<id>/<job-take|…>/<id>[/<id>]`,
//    plain characters only, nothing to decode) or it is 404 here, before the API sees it;
// 2. the Host header is replaced, so no mount (pod ports, load-balancing endpoints) claims it, and
//    cookies are dropped;
// 3. once routed, a route that is not a worker protocol route (`config.worker`) is 404 before any
//    other hook runs (api/auth/relayed-requests.ts), and the request guard refuses a worker whose pod is
//    not on the host whose relay carried the call.
// The worker's own token is needed as on the API's port.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { GpufleetError } from '../../model/index.ts';
import { markRelayed, RELAY_ONLY_WORKER_ROUTES } from '../auth/relayed-requests.ts';
import { toProblem } from '../errors/problem.ts';

/** the worker protocol's paths: endpoint, route, worker, and a job id for job-done and job-stream */
const WORKER_PATH = /^\/v2\/[A-Za-z0-9_-]{1,128}\/(?:(?:job-take|job-take-batch|job-stop|ping)\/[A-Za-z0-9_-]{1,128}|(?:job-done|job-stream)\/[A-Za-z0-9_-]{1,128}\/[A-Za-z0-9_.-]{1,128})(?:\?[^#]*)?$/;

/** connections one host's relay may hold at once that carried a worker token of that host (a worker holds about three: job-take, job-stop, ping) */
export const MAX_CONNECTIONS_PER_HOST = 256;
/**
 * connections one host's relay may hold that have not (yet) carried a worker token of that host; when
 * one more comes, the oldest of them with no request in flight is closed to make room (a worker sends
 * its request at once, so a silent connection is always the older), else the new one is refused
 */
export const MAX_UNPROVEN_PER_HOST = 32;
/** from the connection until its first request's head is complete */
export const HEAD_DEADLINE_MS = 10_000;
/** on keep-alive, from the end of a response until the next request's head is complete */
export const KEEP_ALIVE_IDLE_MS = 60_000;
/** while a request is in flight (a long poll answers within GPUFLEET_WORKER_POLL_MS, 60 s by default): nothing received for this long closes it */
const IN_FLIGHT_SILENCE_MS = 5 * 60_000;

function refuse(res: ServerResponse): void {
  const body = JSON.stringify(toProblem(new GpufleetError('ROUTE_NOT_FOUND', RELAY_ONLY_WORKER_ROUTES)));
  res.writeHead(404, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export interface WorkerRelayServer {
  /** serves one connection that came through `hostId`'s relay */
  accept(hostId: string, connection: Duplex): void;
  /** ends every relayed connection */
  close(): void;
}

interface Held {
  hostId: string;
  /** requests whose response has not ended */
  inFlight: number;
  proven: boolean;
  released: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** `apiHost`: the Host header relayed requests get (the control plane's own address) */
export function workerRelayServer(app: FastifyInstance, apiHost: string): WorkerRelayServer {
  const held = new Map<Duplex, Held>();
  /** per host: connections that carried a worker token, and those that did not, oldest first */
  const proven = new Map<string, number>();
  const unproven = new Map<string, Set<Duplex>>();
  const unprovenOf = (hostId: string) => unproven.get(hostId) ?? unproven.set(hostId, new Set()).get(hostId)!;

  const arm = (c: Duplex, h: Held, ms: number) => {
    clearTimeout(h.timer);
    h.timer = c.destroyed ? undefined : setTimeout(() => c.destroy(), ms);
  };
  /** the connection no longer counts against its host (once, whichever of end, error, close came first) */
  const release = (c: Duplex, h: Held) => {
    if (h.released) return;
    h.released = true;
    if (h.proven) proven.set(h.hostId, (proven.get(h.hostId) ?? 1) - 1);
    else unprovenOf(h.hostId).delete(c);
  };
  const promote = (c: Duplex, h: Held) => {
    if (h.proven || h.released || (proven.get(h.hostId) ?? 0) >= MAX_CONNECTIONS_PER_HOST) return;
    unprovenOf(h.hostId).delete(c);
    h.proven = true;
    proven.set(h.hostId, (proven.get(h.hostId) ?? 0) + 1);
  };

  const server: Server = createServer({ requestTimeout: 0 }, (req, res) => {
    const c = req.socket as Duplex;
    const h = held.get(c);
    if (h) {
      // the head is complete: no deadline but silence while it is served
      h.inFlight += 1;
      arm(c, h, IN_FLIGHT_SILENCE_MS);
      res.once('close', () => {
        h.inFlight -= 1;
        if (h.inFlight === 0) arm(c, h, KEEP_ALIVE_IDLE_MS);
      });
    }
    if (h === undefined || (req.method !== 'GET' && req.method !== 'POST') || !WORKER_PATH.test(req.url ?? '')) return refuse(res);
    req.headers.host = apiHost;
    delete req.headers.cookie;
    markRelayed(req, h.hostId, () => promote(c, h));
    app.routing(req, res);
  });
  // an upgrade (WebSocket) is not part of the worker protocol
  server.on('upgrade', (_req, socket: Duplex) => socket.destroy());
  return {
    accept(hostId, connection) {
      // a host's containers cannot crowd out its workers, nor keep a connection that says nothing
      const waiting = unprovenOf(hostId);
      if (waiting.size >= MAX_UNPROVEN_PER_HOST) {
        const idle = [...waiting].find((c) => held.get(c)?.inFlight === 0);
        if (idle === undefined) return void connection.destroy();
        idle.destroy();
        const h = held.get(idle);
        if (h) release(idle, h);
      }
      const h: Held = { hostId, inFlight: 0, proven: false, released: false, timer: undefined };
      held.set(connection, h);
      waiting.add(connection);
      // what Node's HTTP server asks of a socket beyond a Duplex (an SSH channel is one); its own
      // timeouts (keepAliveTimeout) go through setTimeout, which does nothing here: the deadlines
      // above stand in for them
      const c = connection as Duplex & Record<string, unknown>;
      c.setTimeout ??= () => c;
      c.setNoDelay ??= () => c;
      c.setKeepAlive ??= () => c;
      c.remoteAddress ??= `relay:${hostId}`;
      arm(connection, h, HEAD_DEADLINE_MS);
      connection.once('end', () => release(connection, h));
      connection.once('close', () => {
        clearTimeout(h.timer);
        held.delete(connection);
        release(connection, h);
      });
      connection.on('error', () => {
        release(connection, h);
        connection.destroy();
      });
      server.emit('connection', connection);
      connection.on('data', () => {
        if (h.inFlight > 0) arm(connection, h, IN_FLIGHT_SILENCE_MS);
      });
    },
    close() {
      for (const c of held.keys()) c.destroy();
      held.clear();
      server.close();
    },
  };
}
