// Server-sent events (text/event-stream) over a Fastify reply: the reply streams, and the writer
// tells when the client has gone so the producer can stop (an SSH channel, a subscription). Writes
// wait for the socket to drain, so a slow client slows its producer instead of filling memory.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** a comment line this often keeps proxies and load balancers from closing an idle stream */
export const SSE_KEEPALIVE_MS = 15_000;

export interface SseWriter {
  /** One event; resolves false when the client has gone (write nothing more). */
  send(data: unknown, opts?: { id?: string; event?: string }): Promise<boolean>;
  /** Ends the stream (the client sees it close). */
  end(): void;
  /** `fn` runs once, when the stream closes for any reason (the client went, or end()). */
  onClose(fn: () => void): void;
  readonly closed: boolean;
}

export function openSse(reply: FastifyReply): SseWriter {
  const body = new PassThrough();
  let closed = false;
  const gone = new Promise<void>((resolve) => body.once('close', () => resolve()));
  void gone.then(() => {
    closed = true;
    clearInterval(keepalive);
  });
  const keepalive = setInterval(() => !closed && body.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS);
  keepalive.unref();
  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(body);
  // the headers go out now, not with the first event (a quiet log would leave the client waiting)
  body.write(': open\n\n');
  return {
    async send(data, opts = {}) {
      if (closed) return false;
      let frame = '';
      if (opts.event) frame += `event: ${opts.event}\n`;
      if (opts.id) frame += `id: ${opts.id}\n`;
      frame += `data: ${JSON.stringify(data)}\n\n`;
      if (!body.write(frame)) await Promise.race([once(body, 'drain'), gone]);
      return !closed;
    },
    end() {
      if (!closed) body.end();
    },
    onClose(fn) {
      void gone.then(fn);
    },
    get closed() {
      return closed;
    },
  };
}
