// The client side of an interactive exec session (GET /v2/pods/{id}/exec/ws, docs/pods.md
// "Interactive exec"): binary frames are a channel byte and data (0 stdin, 1 stdout, 2 stderr);
// text frames are JSON control messages (resize, eof; the server's last one is exit or error).
import type WebSocket from 'ws';
import { ApiError, type ApiClient } from './api-client.ts';

export interface ExecSessionOptions {
  /** a terminal of cols × rows (`docker exec -t`); without, stdout and stderr come apart */
  tty?: boolean;
  cols?: number;
  rows?: number;
}

export interface ExecSessionHandlers {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
}

export interface ExecSessionEnd {
  /** the command's exit code; null when the session ended otherwise */
  code: number | null;
  /** exited | client closed | idle timeout | connection lost */
  reason: string;
}

export class PodExecSocket {
  /** settles when the session is over: the exit, or an ApiError the server sent (or the socket dropped) */
  readonly ended: Promise<ExecSessionEnd>;

  private constructor(
    private readonly ws: WebSocket,
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
    return new Promise((resolve, reject) => {
      let last: ExecSessionEnd | ApiError | null = null;
      const ended = new Promise<ExecSessionEnd>((done, fail) => {
        ws.on('message', (data, binary) => {
          const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
          if (binary) {
            if (buf[0] === 1) out.stdout(buf.subarray(1));
            else if (buf[0] === 2) out.stderr(buf.subarray(1));
            return;
          }
          const m = JSON.parse(buf.toString('utf8')) as { exit?: ExecSessionEnd; error?: { status?: number; code?: string; detail?: string; errors?: string[] } };
          if (m.exit) last = m.exit;
          else if (m.error) last = new ApiError(m.error.status ?? 500, m.error.code ?? 'INTERNAL', m.error.detail ?? 'the session failed', m.error.errors ?? []);
        });
        ws.on('close', (code) => {
          if (last instanceof ApiError) fail(last);
          else if (last) done(last);
          else fail(new ApiError(502, 'CONNECTION_LOST', `the session's connection closed (${code}) before the command's exit code came`));
        });
      });
      ended.catch(() => undefined); // read by the caller once open
      ws.once('open', () => resolve(new PodExecSocket(ws, ended)));
      rejectOnRefusal(ws, reject);
      ws.once('error', (e) => reject(e));
    });
  }

  /** stdin */
  write(data: Buffer | string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(data)]), { binary: true });
  }

  /** stdin ended (non-terminal sessions; on a terminal, send ^D instead) */
  endInput(): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify({ eof: true }));
  }

  resize(cols: number, rows: number): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify({ resize: { cols, rows } }));
  }

  /** leaves the session: the command is ended on the host */
  close(): void {
    this.ws.close(1000);
  }

  /** drops the connection without a close handshake (a client that vanished) */
  terminate(): void {
    this.ws.terminate();
  }
}

/** A refusal before the upgrade (its problem+json read into an ApiError) rejects; the socket is dropped. */
export function rejectOnRefusal(ws: WebSocket, reject: (e: ApiError) => void): void {
  ws.once('unexpected-response', (_req, res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => {
      let p: { code?: string; detail?: string; title?: string; errors?: string[] } = {};
      try {
        p = JSON.parse(body) as typeof p;
      } catch {
        /* not problem+json */
      }
      reject(new ApiError(res.statusCode ?? 502, p.code ?? `HTTP_${res.statusCode}`, p.detail ?? p.title ?? res.statusMessage ?? 'refused', p.errors ?? []));
      ws.terminate();
    });
  });
}
