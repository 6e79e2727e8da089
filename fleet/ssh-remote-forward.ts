// An SSH remote forward on a connection of its own (SshPool.remoteForward): the host's sshd listens on
// its loopback (127.0.0.1, a port it picks: with sshd's default `GatewayPorts no` nothing else can be
// bound) and hands each connection made there to us as a `forwarded-tcpip` channel. Commands that
// belong with the forward (the relay that listens where containers reach, docs/serverless.md) run on
// the same connection, so they end with it. The caller watches `closed` and starts over.
import type { ClientChannel } from 'ssh2';
import { type Conn, openExec, retire } from './ssh-channels.ts';
import { openStream, type SshStream, type StreamHandlers } from './ssh-stream.ts';

/** where a forwarded connection came from, on the host (ssh2's `tcp connection` details) */
export interface ForwardedFrom {
  srcIP: string;
  srcPort: number;
}

export interface RemoteForward {
  /** the port sshd listens on, on the host's 127.0.0.1 */
  readonly port: number;
  /** settles when the connection is gone (the host, the network, or close()) */
  readonly closed: Promise<void>;
  /** a long-lived command on the same connection; its stdin stays open until it or the connection ends */
  exec(command: string, handlers: StreamHandlers): Promise<SshStream>;
  /** ends the forward, its commands and the connection */
  close(): Promise<void>;
}

export function openRemoteForward(conn: Conn, onConnection: (channel: ClientChannel, from: ForwardedFrom) => void): Promise<RemoteForward> {
  return new Promise((resolve, reject) => {
    let port = -1;
    conn.client.on('tcp connection', (info, accept, rejectChannel) => {
      if (port < 0 || info.destPort !== port) return rejectChannel();
      onConnection(accept(), { srcIP: info.srcIP, srcPort: info.srcPort });
    });
    try {
      conn.client.forwardIn('127.0.0.1', 0, (err, bound) => {
        if (err) {
          void retire(conn);
          return reject(err);
        }
        port = bound;
        resolve({
          port,
          closed: conn.closed,
          exec: async (command, handlers) => openStream(await openExec(conn, command), handlers),
          close: () => retire(conn),
        });
      });
    } catch (err) {
      conn.alive = false; // "Not connected", synchronously, when the socket is gone
      void retire(conn);
      reject(err as Error);
    }
  });
}
