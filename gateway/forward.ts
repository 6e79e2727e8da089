// One request sent on to a worker with undici's dispatcher (`Dispatcher.dispatch` and a handler),
// the worker's answer written straight to the caller's socket as it comes (SSE, chunked, any size):
// undici owns the connection pool and HTTP/1.1 on the wire; the handler below passes back-pressure
// both ways (a full socket pauses the worker's side) and aborts the worker's request when the caller
// goes away (docs/gateway.md, "Why undici's dispatcher"). Nothing is retried. What is not the
// caller's to send on (its credentials, hop-by-hop headers) is dropped here; `x-forwarded-*` are set.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CallerUpgrade, Tunnels } from './tunnel.ts';

/** The caller's credentials to gpufleet: never sent to a worker. */
const CREDENTIALS = new Set(['authorization', 'x-api-key', 'proxy-authorization']);
/**
 * Hop-by-hop headers (RFC 9110 7.6.1) and the forwarding headers the gateway sets itself. `expect`
 * is hop-by-hop in practice: the gateway answers `100-continue` itself (Node does) and undici refuses it.
 */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto']);
/** Hop-by-hop headers of the worker's answer. */
const NOT_RETURNED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export interface Forward {
  /** `http://<worker id>:<port>` (worker-dispatcher.ts) */
  origin: string;
  /** path and query as the worker sees them */
  path: string;
  /** the request body as a stream (counted against the limit), or null */
  body: NodeJS.ReadableStream | null;
  /** to the end of the worker's answer: no headers, or a gap in the body, longer than this fails */
  timeoutMs: number;
  /** the caller's address and scheme, for x-forwarded-for / x-forwarded-proto */
  callerIp: string;
  callerProto: string;
  /** headers of the gateway's own to send with the answer (RateLimit); the worker's win on a clash */
  ownHeaders: OutgoingHttpHeaders;
  /** called once, when the worker's status and headers have arrived and before they are written */
  onAnswer(): void;
  /** called once, when the caller's response has closed (answered, failed or the caller gone) */
  onClose(): void;
  /**
   * an upgrade request (WebSocket): sent on as one, and a 101 from the worker joins the caller's socket
   * to the worker's in `tunnels` (tunnel.ts); onClose then comes when the tunnel ends
   */
  upgrade?: { caller: CallerUpgrade; tunnels: Tunnels };
  /**
   * cookies that are not the caller's to send on, nor the worker's to set (gpufleet's own on a pod's
   * port, pod-ports.ts): taken out of `Cookie` before sending, and `Set-Cookie` naming one is dropped
   */
  ownCookie?: (name: string) => boolean;
}

/**
 * Resolves when the worker's answer has been written to the caller (or the caller went away);
 * rejects when no answer started: the worker could not be reached, broke off before its headers, or
 * took too long (the caller's response is untouched then, for a problem+json).
 */
export function forward(dispatcher: Dispatcher, req: IncomingMessage, res: ServerResponse, f: Forward): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // first: from here on the caller's close is seen (onClose) whatever happens below
    const writer = new AnswerWriter(res, f, resolve, reject);
    dispatcher.dispatch(
      {
        origin: f.origin,
        path: f.path,
        method: req.method as Dispatcher.HttpMethod,
        headers: requestHeaders(req.headers, f),
        body: f.body as Dispatcher.DispatchOptions['body'],
        headersTimeout: f.timeoutMs,
        bodyTimeout: f.timeoutMs,
        ...(f.upgrade ? { upgrade: f.upgrade.caller.protocol } : {}),
      },
      writer,
    );
  });
}

/** Writes the worker's answer to the caller's response as undici delivers it. */
class AnswerWriter implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private started = false;
  private upgraded = false;
  private readonly onResClose = (): void => {
    // a tunnel's caller going away is the tunnel's to handle (tunnel.ts): undici is done with it
    if (!this.res.writableFinished && !this.upgraded) this.controller?.abort(new Error('the caller went away'));
    this.f.onClose();
  };
  private readonly onDrain = (): void => this.controller?.resume();

  constructor(
    private readonly res: ServerResponse,
    private readonly f: Forward,
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
  ) {
    res.once('close', this.onResClose);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.res.destroyed) controller.abort(new Error('the caller went away'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.started = true;
    this.f.onAnswer();
    this.res.writeHead(statusCode, answerHeaders(headers, this.f.ownHeaders, this.f.ownCookie));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', this.onDrain);
    }
  }

  onResponseEnd(): void {
    // an upgrade the worker refused: its answer was the caller's, and the connection ends with it
    const socket = this.f.upgrade?.caller.socket;
    this.res.end(socket ? () => socket.destroy() : undefined);
    this.resolve();
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.started = true;
    this.upgraded = true;
    this.f.onAnswer();
    this.res.statusCode = statusCode; // what the request's metrics record when it ends (nothing is written through res)
    if (!this.f.upgrade) socket.destroy(); // undici sends an upgrade only when asked to
    else {
      const own = this.f.ownCookie;
      const lines = headers['set-cookie'];
      const sent = own && lines !== undefined ? { ...headers, 'set-cookie': keptSetCookies(lines, own) } : headers;
      this.f.upgrade.tunnels.join(this.f.upgrade.caller, socket, statusCode, sent, this.f.ownHeaders);
    }
    this.resolve();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.res.off('drain', this.onDrain);
    if (!this.started) {
      this.reject(err);
      return;
    }
    // the status line is out: the caller's connection ends early, as the worker's did
    this.res.destroy(err);
    this.resolve();
  }
}

function requestHeaders(h: IncomingHttpHeaders, f: Forward): Record<string, string | string[]> {
  const named = connectionNamed(h.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in h) {
    const v = h[name];
    if (v === undefined || CREDENTIALS.has(name) || NOT_FORWARDED.has(name) || named?.has(name)) continue;
    if (name === 'cookie' && f.ownCookie) {
      const kept = withoutCookies(v, f.ownCookie);
      if (kept) out[name] = kept;
      continue;
    }
    out[name] = v;
  }
  out['x-forwarded-for'] = f.callerIp;
  out['x-forwarded-proto'] = f.callerProto;
  if (h.host !== undefined) out['x-forwarded-host'] = h.host;
  return out;
}

function answerHeaders(h: IncomingHttpHeaders, own: OutgoingHttpHeaders, ownCookie?: (name: string) => boolean): OutgoingHttpHeaders {
  const named = connectionNamed(h.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in own) out[name] = own[name];
  for (const name in h) {
    const v = h[name];
    if (v === undefined || NOT_RETURNED.has(name) || named?.has(name)) continue;
    if (name === 'set-cookie' && ownCookie) {
      const kept = keptSetCookies(v, ownCookie);
      if (kept.length) out[name] = kept;
      continue;
    }
    out[name] = v;
  }
  return out;
}

/** the Set-Cookie lines that name none of `own` (one line comes as a string, several as an array) */
const keptSetCookies = (lines: string | string[], own: (name: string) => boolean): string[] =>
  (Array.isArray(lines) ? lines : [lines]).filter((c) => !own(c.slice(0, Math.max(0, c.indexOf('='))).trim()));

/** a Cookie header without the cookies `drop` names; '' when none is left */
function withoutCookies(v: string | string[], drop: (name: string) => boolean): string {
  return (Array.isArray(v) ? v.join('; ') : v)
    .split(';')
    .map((c) => c.trim())
    .filter((c) => c !== '' && !drop(c.slice(0, Math.max(0, c.indexOf('=')))))
    .join('; ');
}

/** The headers a `Connection` header names are hop-by-hop too (RFC 9110 7.6.1). */
function connectionNamed(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  const names = (Array.isArray(connection) ? connection.join(',') : connection).split(',').map((s) => s.trim().toLowerCase());
  return names.some((n) => n !== 'keep-alive' && n !== 'close' && n !== '') ? new Set(names) : undefined;
}
