// The client side of an interactive exec session (GET /v2/pods/{id}/exec/ws, docs/pods.md
// "Interactive exec"), one implementation for Node and browsers: a single-use ticket first
// (POST /v2/pods/{id}/exec/ticket, with the client's credentials: a key, or a console session's
// cookie and CSRF header), then the WebSocket with `?ticket=` and no credentials of its own, so a
// browser's WebSocket (which cannot send headers) opens it as `ws` does. A refusal (401, 403, 404,
// 409, 503) is the ticket's HTTP answer, readable in a browser too. Frames: exec-frames.ts.
import { ApiError, problemError, type ApiClient, type WebSocketLike } from './api-client.ts';
import { decodeFrame, EOF_MESSAGE, resizeMessage, stdinFrame, type ExecSessionEnd } from './exec-frames.ts';

export type { ExecSessionEnd } from './exec-frames.ts';

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

/** the command of an interactive shell: bash as a login shell where the image has it, else sh (`gpufleet pods ssh`, the console's terminal) */
export const LOGIN_SHELL = ['sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi'] as const;

const OPEN = 1; // WebSocket.OPEN, the same in `ws` and browsers

export class PodExecSocket {
  /**
   * settles when the session is over: the exit (`{code: null, reason: 'client closed'}` after
   * close()), or an ApiError the server sent (or the socket dropped)
   */
  readonly ended: Promise<ExecSessionEnd>;

  /** close() or terminate() was called: the end is the client's, not a lost connection */
  private left = false;

  private constructor(
    private readonly ws: WebSocketLike,
    ended: Promise<ExecSessionEnd>,
  ) {
    this.ended = ended;
  }

  /**
   * Opens a session: the ticket, then the socket. A refusal of the ticket (404, 403, 409, …) rejects
   * with its ApiError; one of the upgrade itself (422: a bad command or size) too under `ws`, while a
   * browser only says that the socket failed.
   */
  static async open(client: ApiClient, podId: string, argv: readonly string[], opts: ExecSessionOptions, out: ExecSessionHandlers): Promise<PodExecSocket> {
    const pod = encodeURIComponent(podId);
    const { ticket } = await client.post<{ ticket: string }>(`/v2/pods/${pod}/exec/ticket`);
    const q = new URLSearchParams({ ticket });
    for (const a of argv) q.append('command', a);
    if (opts.tty) q.set('tty', 'true');
    if (opts.cols !== undefined) q.set('cols', String(opts.cols));
    if (opts.rows !== undefined) q.set('rows', String(opts.rows));
    const ws = client.webSocket(`/v2/pods/${pod}/exec/ws?${q.toString()}`, { credentials: false });
    ws.binaryType = 'arraybuffer';
    return new Promise((resolve, reject) => {
      let last: ExecSessionEnd | ApiError | null = null;
      let session: PodExecSocket | null = null;
      const ended = new Promise<ExecSessionEnd>((done, fail) => {
        ws.addEventListener('message', (ev) => {
          const f = decodeFrame(ev.data as string | ArrayBuffer);
          if (f.kind === 'stdout') out.stdout(f.data);
          else if (f.kind === 'stderr') out.stderr(f.data);
          else if (f.kind === 'exit') last = f.exit;
          else if (f.kind === 'error') last = new ApiError(f.problem.status ?? 500, f.problem.code ?? 'INTERNAL', f.problem.detail ?? 'the session failed', f.problem.errors ?? []);
        });
        ws.addEventListener('close', (ev) => {
          if (last instanceof ApiError) fail(last);
          else if (last) done(last);
          else if (session?.left) done({ code: null, reason: 'client closed' });
          else fail(new ApiError(502, 'CONNECTION_LOST', `the session's connection closed (${ev.code ?? 'no code'}) before the command's exit code came`));
        });
      });
      ended.catch(() => undefined); // read by the caller once open
      ws.addEventListener('open', () => resolve((session = new PodExecSocket(ws, ended))), { once: true });
      rejectOnRefusal(ws, reject);
      // a browser's socket tells nothing of a refused upgrade: the ticket was good, so the query was not
      ws.addEventListener('error', (ev) => reject(ev.error instanceof Error ? ev.error : new Error(ev.message ?? 'the session was refused or its connection failed (a browser does not say which: a bad command or terminal size is refused with 422)')), { once: true });
    });
  }

  /** stdin (a string goes as UTF-8) */
  write(data: Uint8Array | string): void {
    if (this.ws.readyState === OPEN) this.ws.send(stdinFrame(data));
  }

  /** stdin ended (non-terminal sessions; on a terminal, send ^D instead) */
  endInput(): void {
    if (this.ws.readyState === OPEN) this.ws.send(EOF_MESSAGE);
  }

  /** the terminal's new size (tty sessions): the host's pty gets a window-change */
  resize(cols: number, rows: number): void {
    if (this.ws.readyState === OPEN) this.ws.send(resizeMessage(cols, rows));
  }

  /** leaves the session: the command is ended on the host */
  close(): void {
    this.left = true;
    this.ws.close(1000);
  }

  /** drops the connection without a close handshake (a client that vanished): `ws` can; a browser closes */
  terminate(): void {
    this.left = true;
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
