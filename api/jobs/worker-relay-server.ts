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

/** connections one host's relay may hold at once (a worker holds about three: job-take, job-stop, ping) */
export const MAX_CONNECTIONS_PER_HOST = 256;
/** a relayed connection from which nothing came for this long is closed (a long poll answers within 60 s) */
const IDLE_MS = 5 * 60_000;

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

/** `apiHost`: the Host header relayed requests get (the control plane's own address) */
export function workerRelayServer(app: FastifyInstance, apiHost: string): WorkerRelayServer {
  const hosts = new WeakMap<object, string>();
  const open = new Set<Duplex>();
  const perHost = new Map<string, number>();
  const server: Server = createServer({ requestTimeout: 0 }, (req, res) => {
    const hostId = hosts.get(req.socket);
    if (hostId === undefined || (req.method !== 'GET' && req.method !== 'POST') || !WORKER_PATH.test(req.url ?? '')) return refuse(res);
    req.headers.host = apiHost;
    delete req.headers.cookie;
    markRelayed(req, hostId);
    app.routing(req, res);
  });
  // an upgrade (WebSocket) is not part of the worker protocol
  server.on('upgrade', (_req, socket: Duplex) => socket.destroy());
  return {
    accept(hostId, connection) {
      // a host's containers cannot hold more than this many connections, nor keep one that says nothing
      const held = (perHost.get(hostId) ?? 0) + 1;
      if (held > MAX_CONNECTIONS_PER_HOST) return void connection.destroy();
      perHost.set(hostId, held);
      // what Node's HTTP server asks of a socket beyond a Duplex (an SSH channel is one)
      const c = connection as Duplex & Record<string, unknown>;
      c.setTimeout ??= () => c;
      c.setNoDelay ??= () => c;
      c.setKeepAlive ??= () => c;
      c.remoteAddress ??= `relay:${hostId}`;
      hosts.set(connection, hostId);
      open.add(connection);
      let idle = setTimeout(() => connection.destroy(), IDLE_MS);
      connection.once('close', () => {
        clearTimeout(idle);
        open.delete(connection);
        perHost.set(hostId, (perHost.get(hostId) ?? 1) - 1);
      });
      connection.on('error', () => connection.destroy());
      server.emit('connection', connection);
      connection.on('data', () => {
        clearTimeout(idle);
        idle = setTimeout(() => connection.destroy(), IDLE_MS);
      });
    },
    close() {
      for (const c of open) c.destroy();
      open.clear();
      server.close();
    },
  };
}
