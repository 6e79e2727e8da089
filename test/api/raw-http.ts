// Requests written byte for byte on a TCP socket, so a test can send request targets that fetch and
// node:http refuse or rewrite: absolute-form (`GET http://x/v2/accounts HTTP/1.1`), raw percent-encodings,
// dot segments, control characters. Each request has its own connection (`Connection: close`); the
// answer is read to the end, and only its status line is interpreted.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  /** status line and header fields, as received */
  head: string;
  /** everything after the header fields (possibly chunked), as received */
  body: string;
}

export interface RawRequest {
  method: string;
  target: string;
  headers?: Record<string, string>;
  body?: string;
}

export function sendRaw(baseUrl: string, req: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const body = req.body ?? '';
  const headers: Record<string, string> = {
    host: `${hostname}:${port}`,
    connection: 'close',
    ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
    ...req.headers,
  };
  const text = `${req.method} ${req.target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`;
  const what = `${req.method} ${JSON.stringify(req.target)}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    let failure: Error | undefined;
    socket.setTimeout(15_000, () => socket.destroy(new Error(`no answer to ${what}`)));
    socket.on('data', (d: Buffer) => chunks.push(d));
    // a server that answers and closes at once may reset the connection: the answer still counts
    socket.on('error', (e) => (failure = e));
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3}) /.exec(all);
      if (!m) return reject(failure ?? new Error(`no status line in the answer to ${what}: ${JSON.stringify(all.slice(0, 200))}`));
      const end = all.indexOf('\r\n\r\n');
      resolve({ status: Number(m[1]), head: end < 0 ? all : all.slice(0, end), body: end < 0 ? '' : all.slice(end + 4) });
    });
    socket.write(Buffer.from(text, 'utf8'));
  });
}

/** A header field of a raw answer (the first, case-insensitive), or undefined. */
export function rawHeader(a: RawAnswer, name: string): string | undefined {
  const line = a.head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}
