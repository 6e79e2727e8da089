// The client side of an interactive exec session (GET /v2/pods/{id}/exec/ws, docs/pods.md
// "Interactive exec"): binary frames are a channel byte and data (0 stdin, 1 stdout, 2 stderr);
// text frames are JSON control messages (resize, eof; the server's last one is exit or error).
import { ApiError, problemError, type ApiClient, type WebSocketLike } from './api-client.ts';

export interface ExecSessionOptions {
  /** a terminal of cols × rows (`docker exec -t`); without, stdout and stderr come apart */
  tty?: boolean;
  cols?: number;
  rows?: number;
}

export interface ExecSessionHandlers {
  stdout(data: Uint8Array): void;
  stderr(data: Uint8Array): void;
}

export interface ExecSessionEnd {
  /** the command's exit code; null when the session ended otherwise */
  code: number | null;
  /** exited | client closed | idle timeout | connection lost */
  reason: string;
}

const OPEN = 1; // WebSocket.OPEN, the same in `ws` and browsers

export class PodExecSocket {
  /** settles when the session is over: the exit, or an ApiError the server sent (or the socket dropped) */
  readonly ended: Promise<ExecSessionEnd>;

  private constructor(
    private readonly ws: WebSocketLike,
    ended: Promise<ExecSessionEnd>,
  ) {
    this.ended = ended;
  }

  /** Opens a session; a refusal before the upgrade (404, 403, 422, …) rejects with its ApiError. */
  static open(client: ApiClient, podId: string, argv: readonly string[], opts: ExecSessionOptions, out: ExecSessionHandlers): Promise<PodExecSocket> {
    const q = new URLSearchParams();
    for (const a of argv) q.append('command', a);
    if (opts.tty) q.set('tty', 'true');
    if (opts.cols !== undefined) q.set('cols', String(opts.cols));
    if (opts.rows !== undefined) q.set('rows', String(opts.rows));
    const ws = client.webSocket(`/v2/pods/${encodeURIComponent(podId)}/exec/ws?${q.toString()}`);
    ws.binaryType = 'arraybuffer';
    return new Promise((resolve, reject) => {
      let last: ExecSessionEnd | ApiError | null = null;
      const ended = new Promise<ExecSessionEnd>((done, fail) => {
        ws.addEventListener('message', (ev) => {
          // text frames come as strings; binary ones as ArrayBuffer (binaryType below)
          if (typeof ev.data !== 'string') {
            const bytes = new Uint8Array(ev.data as ArrayBuffer);
            if (bytes[0] === 1) out.stdout(bytes.subarray(1));
            else if (bytes[0] === 2) out.stderr(bytes.subarray(1));
            return;
          }
          const m = JSON.parse(ev.data) as { exit?: ExecSessionEnd; error?: { status?: number; code?: string; detail?: string; errors?: string[] } };
          if (m.exit) last = m.exit;
          else if (m.error) last = new ApiError(m.error.status ?? 500, m.error.code ?? 'INTERNAL', m.error.detail ?? 'the session failed', m.error.errors ?? []);
        });
        ws.addEventListener('close', (ev) => {
          if (last instanceof ApiError) fail(last);
          else if (last) done(last);
          else fail(new ApiError(502, 'CONNECTION_LOST', `the session's connection closed (${ev.code ?? 'no code'}) before the command's exit code came`));
        });
      });
      ended.catch(() => undefined); // read by the caller once open
      ws.addEventListener('open', () => resolve(new PodExecSocket(ws, ended)), { once: true });
      rejectOnRefusal(ws, reject);
      ws.addEventListener('error', (ev) => reject(ev.error instanceof Error ? ev.error : new Error(ev.message ?? 'the WebSocket failed')), { once: true });
    });
  }

  /** stdin */
  write(data: Uint8Array | string): void {
    if (this.ws.readyState !== OPEN) return;
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    const frame = new Uint8Array(bytes.length + 1); // channel 0, then the bytes
    frame.set(bytes, 1);
    this.ws.send(frame);
  }

  /** stdin ended (non-terminal sessions; on a terminal, send ^D instead) */
  endInput(): void {
    if (this.ws.readyState === OPEN) this.ws.send(JSON.stringify({ eof: true }));
  }

  resize(cols: number, rows: number): void {
    if (this.ws.readyState === OPEN) this.ws.send(JSON.stringify({ resize: { cols, rows } }));
  }

  /** leaves the session: the command is ended on the host */
  close(): void {
    this.ws.close(1000);
  }

  /** drops the connection without a close handshake (a client that vanished): `ws` can; a browser closes */
  terminate(): void {
    const w = this.ws as WebSocketLike & { terminate?: () => void };
    if (w.terminate) w.terminate();
    else w.close();
  }
}

/** what `ws` (Node) adds to a socket: the HTTP answer of a refused upgrade */
interface RefusalEvents {
  once(event: 'unexpected-response', listener: (req: unknown, res: RefusedResponse) => void): unknown;
  terminate(): void;
}
interface RefusedResponse {
  statusCode?: number;
  statusMessage?: string;
  setEncoding(e: string): void;
  on(event: 'data' | 'end', listener: (chunk: string) => void): unknown;
}

/**
 * A refusal before the upgrade (its problem+json read into an ApiError) rejects; the socket is
 * dropped. Only `ws` shows the refusal's answer; a browser's socket just fails (its error event).
 */
export function rejectOnRefusal(ws: WebSocketLike, reject: (e: ApiError) => void): void {
  const node = ws as WebSocketLike & Partial<RefusalEvents>;
  if (typeof node.once !== 'function') return;
  node.once('unexpected-response', (_req, res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => {
      let p: unknown = {};
      try {
        p = JSON.parse(body);
      } catch {
        /* not problem+json */
      }
      reject(problemError(res.statusCode ?? 502, p, res.statusMessage ?? 'refused'));
      node.terminate?.();
    });
  });
}
