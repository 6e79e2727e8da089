// The gateway's routes: any method and path of a load-balancing endpoint goes to one of its ready
// workers (forward.ts: undici's stream API over the worker dispatcher). The request guard has checked
// the caller's key (route config) before this runs; the key itself never reaches the worker. Bodies
// stream both ways (the request body is the raw stream, the answer is written as it comes: SSE,
// chunked), nothing is retried, and what goes wrong before the answer starts is problem+json from the
// one error handler: 404 (not the caller's endpoint), 413 (over 30 MB), 503 (no worker ready within
// the hold), 502 (the worker could not be reached or broke off before answering), 504 (no answer
// within the time per request). Once the answer has started, a worker that breaks off ends the
// caller's connection (the status line is already sent). An upgrade request (WebSocket) takes the same
// path, guard, balancer and all, and a 101 from the worker joins the two sockets (tunnel.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import type { Agent } from 'undici';
import { isGpufleetCookie, type WorkerService } from '../core/index.ts';
import { GpufleetError, isGpufleetError } from '../model/index.ts';
import type { Balancer } from './balancer.ts';
import { forward } from './forward.ts';
import { Tunnels } from './tunnel.ts';
import { callerUpgrade, endAnsweredUpgrade } from './upgrade-request.ts';
import { workerOrigin } from './worker-dispatcher.ts';
import type { LbWorker, WorkerTable } from './worker-table.ts';
import type { Principal } from '../model/index.ts';

/** The routes' own prefix: rewriteUrl (gateway.ts) moves a load balancer's requests here. */
export const GATEWAY_PREFIX = '/.gateway';

export interface ProxyDeps {
  table: WorkerTable;
  balancer: Balancer;
  dispatcher: Agent;
  workers: WorkerService;
  principalOf(request: FastifyRequest): Principal;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  /** the open WebSocket tunnels, ended when the gateway stops */
  tunnels: Tunnels;
}

export async function proxyRoutes(app: FastifyInstance, d: ProxyDeps): Promise<void> {
  await app.register(async (gw) => {
    // the body is passed on as the stream it arrives as, whatever its type
    gw.removeAllContentTypeParsers();
    gw.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
      const principal = d.principalOf(request);
      const endpointId = (request.params as { endpointId: string }).endpointId;
      const ep = d.table.endpoint(endpointId);
      if (!ep || ep.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${endpointId} was not found.`);
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > d.maxBodyBytes) throw tooLarge(d.maxBodyBytes);

      let w = d.balancer.pick(ep.id);
      if (!w) {
        // none ready: held (an abort signal only here: making one per request costs a DOMException)
        const gone = new AbortController();
        const onClose = (): void => gone.abort();
        reply.raw.once('close', onClose);
        w = await d.balancer.acquire(ep.id, gone.signal);
        reply.raw.off('close', onClose);
        if (!w) return reply; // the caller went away while held
      }
      const done = d.workers.requests.start(ep.id, w.id);

      const limit = isReadable(request.body) ? limitBody(request, d.maxBodyBytes) : null;
      const upgrade = callerUpgrade(request);
      const sentAt = Date.now();
      forward(d.dispatcher, request.raw, reply.raw, {
        origin: workerOrigin(w),
        path: workerPath(request.url, endpointId),
        body: limit ? (request.body as NodeJS.ReadableStream) : null,
        timeoutMs: d.requestTimeoutMs,
        callerIp: request.ip,
        callerProto: request.protocol,
        ownHeaders: reply.getHeaders() as OutgoingHttpHeaders,
        onAnswer: () => reply.hijack(), // from here on the answer is the worker's, written as it comes
        onClose: done, // the request is no longer in flight on the worker
        // gpufleet's own cookies (the console's session) never reach a worker, nor may it set one
        ownCookie: isGpufleetCookie,
        ...(upgrade ? { upgrade: { caller: upgrade, tunnels: d.tunnels } } : {}),
      }).catch((error: unknown) => {
        if (reply.sent || reply.raw.destroyed) return; // the answer had started, or the caller went away
        void reply.send(limit?.exceeded ? tooLarge(d.maxBodyBytes) : upstreamError(error, w, d.requestTimeoutMs, Date.now() - sentAt));
      });
      return reply;
    };

    // @fastify/websocket wraps every route's handler to complete a WebSocket handshake itself when a
    // request came as an upgrade; here the worker completes it (tunnel.ts), so these routes keep their own
    gw.addHook('onRoute', (r) => {
      if (r.url.startsWith(GATEWAY_PREFIX)) r.handler = handler;
    });
    const route = {
      config: { scope: 'read_write', rawKey: true },
      schema: { hide: true },
      exposeHeadRoute: false,
      onResponse: endAnsweredUpgrade,
    } as const;
    gw.all(`${GATEWAY_PREFIX}/:endpointId`, route, handler);
    gw.all(`${GATEWAY_PREFIX}/:endpointId/*`, route, handler);
  });
}

/** `/.gateway/<id>/echo?q=1` → `/echo?q=1`; an `api_key` query parameter is dropped (a credential). */
export function workerPath(url: string, endpointId: string): string {
  const rest = url.slice(GATEWAY_PREFIX.length + 1 + endpointId.length);
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  const q = path.indexOf('?');
  if (q < 0 || !path.includes('api_key', q)) return path;
  const params = new URLSearchParams(path.slice(q + 1));
  params.delete('api_key');
  const query = params.toString();
  return path.slice(0, q) + (query ? `?${query}` : '');
}

function isReadable(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { pipe?: unknown }).pipe === 'function';
}

function tooLarge(max: number): GpufleetError {
  // the rest of the body is not read: the connection closes after the answer
  return new GpufleetError('PAYLOAD_TOO_LARGE', `The request body is larger than the ${Math.round(max / 1e6)} MB a load-balancing endpoint takes.`, {
    headers: { connection: 'close' },
  });
}

/** Counts the body as it streams; past `max` the stream fails and the caller gets 413. */
function limitBody(request: FastifyRequest, max: number): { exceeded: boolean } {
  const state = { exceeded: false };
  let seen = 0;
  const source = request.body as NodeJS.ReadableStream;
  const counted = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      seen += chunk.length;
      if (seen > max) {
        state.exceeded = true;
        source.unpipe(counted);
        cb(tooLarge(max));
      } else cb(null, chunk);
    },
  });
  source.pipe(counted);
  request.body = counted;
  return state;
}

function upstreamError(error: unknown, w: LbWorker, timeoutMs: number, elapsedMs: number): GpufleetError {
  if (isGpufleetError(error)) return error;
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code ?? '';
  // undici's timers fire at a coarse resolution; a connection that closes as one fires reports "closed"
  if (/TIMEOUT/.test(code) || /TIMEOUT/.test(e.code ?? '') || elapsedMs >= timeoutMs)
    return new GpufleetError('GATEWAY_TIMEOUT', `Worker ${w.id} did not answer within ${Math.round(timeoutMs / 1000)} s.`, { cause: error, fields: { workerId: w.id } });
  const why = e.cause?.message ?? e.message ?? String(error);
  return new GpufleetError('BAD_GATEWAY', `Worker ${w.id} could not be reached or broke off its answer: ${why}`, { cause: error, fields: { workerId: w.id } });
}
