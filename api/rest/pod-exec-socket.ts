// GET /v2/pods/{id}/exec/ws: an interactive exec session over a WebSocket, as `kubectl exec -it`
// (docs/pods.md, "Interactive exec"). Every refusal (401, 403, 404, 409, 422, 503) is a plain HTTP
// answer before the upgrade; after it, this file only frames bytes:
//   binary frames: one channel byte, then data: 0 stdin (client → server), 1 stdout, 2 stderr
//   text frames, JSON: client → server {"resize":{"cols","rows"}} and {"eof":true} (stdin ended);
//   server → client, last: {"exit":{"code","reason"}} (or {"error":problem}), then a close frame.
// Auth: the key in the Authorization header, or `?ticket=` from POST /v2/pods/{id}/exec/ticket
// (single-use, 30 s; for browsers, which cannot set headers on a WebSocket).
// Who may open it and how it ends (exit, client gone, idle timeout) are core's (core/pods/exec).
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { ExecSession, ExecSessionPlan, ExecSessionQuery, PodExecService } from '../../core/index.ts';
import { GpufleetError, isGpufleetError } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { toProblem } from '../errors/problem.ts';
import { errorResponses, idParams } from './route-schema.ts';

export const EXEC_CHANNEL = { stdin: 0, stdout: 1, stderr: 2 } as const;
/** frames in flight to a slow client before the host's output is paused, and when it resumes */
const HIGH_WATER = 64;
const LOW_WATER = 16;
/** the largest frame a client may send */
const MAX_FRAME = 1 << 20;

const plans = new WeakMap<FastifyRequest, ExecSessionPlan>();

export async function podExecSocketRoutes(app: FastifyInstance, podExec: PodExecService): Promise<void> {
  if (!app.hasDecorator('websocketServer')) await app.register(websocket, { options: { maxPayload: MAX_FRAME } });
  // browsers cannot send a key on a WebSocket: a ticket good once, for this pod, for 30 s, instead
  app.post(
    '/v2/pods/:id/exec/ticket',
    {
      config: { scope: 'read_write' },
      schema: {
        tags: ['pods'],
        summary: 'A single-use ticket for one interactive exec session of the pod: GET /v2/pods/{id}/exec/ws?ticket=…, within 30 s',
        params: idParams,
        response: {
          201: { type: 'object', required: ['ticket', 'expiresAt'], properties: { ticket: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } } },
          ...errorResponses(401, 403, 404, 409, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const t = await podExec.issueTicket(principalOf(request), id);
      return reply.code(201).header('cache-control', 'no-store').send(t);
    },
  );
  app.get(
    '/v2/pods/:id/exec/ws',
    {
      websocket: true,
      config: {
        scope: 'read_write',
        held: 'exec',
        redeemTicket: (ticket, request) => podExec.tickets.redeem(ticket, (request.params as { id?: unknown }).id),
      },
      // a refused upgrade (here, or by the guard before @fastify/websocket marked the request) leaves
      // its socket to no one: the answer written, the connection ends
      onResponse: async (request) => {
        if (/^websocket$/i.test(request.headers.upgrade ?? '')) request.raw.socket?.destroy();
      },
      // checks before the upgrade, so a refusal is an HTTP status the client can read
      preHandler: async (request) => {
        if (!request.ws) throw new GpufleetError('BAD_REQUEST', 'This route takes a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket).');
        const { id } = request.params as { id: string };
        plans.set(request, await podExec.planSession(principalOf(request), id, request.query as ExecSessionQuery));
      },
    },
    (socket, request) => serve(socket, request, plans.get(request)!),
  );
}

function serve(socket: WebSocket, request: FastifyRequest, plan: ExecSessionPlan): void {
  let session: ExecSession | null = null;
  let gone = false;
  let inFlight = 0;
  let paused = false;
  const early: { data: RawData; binary: boolean }[] = [];

  const send = (channel: number, data: Buffer): void => {
    if (socket.readyState !== socket.OPEN) return;
    inFlight++;
    if (inFlight > HIGH_WATER && !paused) {
      paused = true;
      session?.pause();
    }
    socket.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true }, () => {
      inFlight--;
      if (paused && inFlight <= LOW_WATER) {
        paused = false;
        session?.resume();
      }
    });
  };
  const last = (message: unknown, code: number, reason: string): void => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.isPaused) socket.resume(); // to read the client's close frame
    socket.send(JSON.stringify(message), () => socket.close(code, reason));
  };
  const onMessage = (s: ExecSession, data: RawData, binary: boolean): void => {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (binary) {
      // a client that sends faster than the host takes: stop reading it until the channel drains
      if (buf[0] === EXEC_CHANNEL.stdin && buf.length > 1 && !s.write(buf.subarray(1)) && !socket.isPaused) {
        socket.pause();
        s.onInputDrain(() => socket.resume());
      }
      return;
    }
    // control messages; anything else is ignored
    let m: { resize?: { cols?: unknown; rows?: unknown }; eof?: unknown };
    try {
      m = JSON.parse(buf.toString('utf8')) as typeof m;
    } catch {
      return;
    }
    if (m?.eof === true) s.endInput();
    const cols = m?.resize?.cols;
    const rows = m?.resize?.rows;
    if (isSize(cols) && isSize(rows)) s.resize(cols, rows);
  };

  let earlyBytes = 0;
  socket.on('message', (data, binary) => {
    if (session) return onMessage(session, data, binary);
    early.push({ data, binary });
    // input sent while the channel opens is held, up to a frame's worth; then the client waits
    earlyBytes += Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    if (earlyBytes > MAX_FRAME && !socket.isPaused) socket.pause();
  });
  socket.on('close', () => {
    gone = true;
    session?.close();
  });
  plan.open({ stdout: (d) => send(EXEC_CHANNEL.stdout, d), stderr: (d) => send(EXEC_CHANNEL.stderr, d) }).then(
    (s) => {
      session = s;
      if (gone) return s.close();
      for (const m of early.splice(0)) onMessage(s, m.data, m.binary);
      if (earlyBytes > MAX_FRAME && socket.isPaused) socket.resume();
      void s.ended.then(({ code, reason }) => last({ exit: { code, reason } }, 1000, code === null ? reason : `exit ${code}`));
    },
    (err: unknown) => {
      const problem = isGpufleetError(err) ? err : new GpufleetError('INTERNAL', 'Opening the session failed; it has been logged.', { cause: err });
      if (problem.status >= 500) request.log.warn({ err, podId: (request.params as { id: string }).id }, 'pod exec session failed');
      last({ error: toProblem(problem) }, 1011, problem.code);
    },
  );
}

const isSize = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 1000;
