// The ssh2 calls the pool makes on one connection: an exec channel (with a PTY when asked), a
// direct-tcpip channel, and ending the connection. A socket already gone makes ssh2 throw at once;
// the connection is then marked dead so the pool dials again (ssh-pool.ts).
import type { Client, ClientChannel } from 'ssh2';

/** The terminal a command gets on the host when it asks for one (interactive exec, `docker pull`'s progress). */
export interface PtySize {
  cols: number;
  rows: number;
  term?: string;
}

/** One pooled ssh2 connection to a host, as the pool dialed it. */
export interface Conn {
  client: Client;
  identity: string;
  fingerprint: string;
  alive: boolean;
  closed: Promise<void>;
}

export function openExec(conn: Conn, cmd: string, pty?: PtySize): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      const done = (err: Error | undefined, ch: ClientChannel): void => (err ? reject(err) : resolve(ch));
      if (pty) conn.client.exec(cmd, { pty: { cols: pty.cols, rows: pty.rows, term: pty.term ?? 'xterm-256color', width: 0, height: 0 } }, done);
      else conn.client.exec(cmd, done);
    } catch (err) {
      conn.alive = false; // ssh2 throws "Not connected" synchronously when the socket is gone
      reject(err as Error);
    }
  });
}

export function openForward(conn: Conn, address: string, port: number): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      conn.client.forwardOut('127.0.0.1', 0, address, port, (err, ch) => (err ? reject(err) : resolve(ch)));
    } catch (err) {
      conn.alive = false; // "Not connected", synchronously, when the socket is gone
      reject(err as Error);
    }
  });
}

/** Ends a connection: a polite disconnect, then destroyed when the host does not answer within 2 s. */
export async function retire(conn: Conn): Promise<void> {
  conn.alive = false;
  conn.client.end();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((r) => {
    timer = setTimeout(() => {
      conn.client.destroy(); // the host did not answer our disconnect
      r();
    }, 2_000);
  });
  await Promise.race([conn.closed, gaveUp]);
  clearTimeout(timer);
}
