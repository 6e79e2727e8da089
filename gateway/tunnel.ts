// A WebSocket (any HTTP/1.1 Upgrade) through the gateway, as bytes: the caller's upgrade request goes
// to the worker as it came (its credentials and forwarding headers handled as for any request,
// forward.ts), and when the worker answers 101 its status line and headers go back to the caller and
// the two sockets are joined, each one's bytes written to the other with back-pressure (pipe), so the
// worker's handshake, subprotocol, extensions, pings and close frames reach the caller unchanged.
// Whichever side ends or fails ends the other. A worker that answers anything but 101 is answered as
// any request is (forward.ts); the caller's connection closes after it.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';

/** The caller's side of an upgrade request: its socket, and what arrived after its head (usually nothing). */
export interface CallerUpgrade {
  /** the protocol the caller asked for (`Upgrade:`), sent on to the worker as it was */
  protocol: string;
  socket: Duplex;
  head: Buffer;
}

/** The joined sockets of open tunnels, so the gateway can end them when it stops. */
export class Tunnels {
  private readonly open = new Set<Duplex>();

  /** Writes the worker's 101 to the caller and joins the two sockets until either side ends. */
  join(caller: CallerUpgrade, worker: Duplex, statusCode: number, headers: IncomingHttpHeaders, own: OutgoingHttpHeaders): void {
    const { socket, head } = caller;
    const end = (): void => {
      this.open.delete(socket);
      socket.destroy();
      worker.destroy();
    };
    socket.once('close', end);
    worker.once('close', end);
    socket.on('error', end);
    worker.on('error', end);
    if (socket.destroyed) {
      end();
      return;
    }
    this.open.add(socket);
    socket.write(switchingProtocols(statusCode, headers, own));
    if (head.length > 0) worker.write(head);
    socket.pipe(worker);
    worker.pipe(socket);
  }

  /** Ends every open tunnel (the gateway is stopping). */
  closeAll(): void {
    for (const s of this.open) s.destroy();
    this.open.clear();
  }

  get size(): number {
    return this.open.size;
  }
}

/** Hop-by-hop headers of the worker's 101 other than the two that make it one (RFC 9110 7.6.1). */
const NOT_RETURNED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The 101's head as the caller receives it: the worker's headers, the gateway's own (RateLimit) first. */
function switchingProtocols(statusCode: number, headers: IncomingHttpHeaders, own: OutgoingHttpHeaders): string {
  const lines = [`HTTP/1.1 ${statusCode} Switching Protocols`, 'Connection: Upgrade', `Upgrade: ${single(headers.upgrade) ?? 'websocket'}`];
  const put = (name: string, v: string | number | readonly string[] | undefined): void => {
    if (v === undefined || NOT_RETURNED.has(name.toLowerCase())) return;
    for (const one of Array.isArray(v) ? v : [String(v)]) lines.push(`${name}: ${one}`);
  };
  for (const name in own) if (!(name in headers)) put(name, own[name]);
  for (const name in headers) put(name, headers[name]);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
