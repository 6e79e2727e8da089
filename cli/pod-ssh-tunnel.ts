// The client side of GET /v2/pods/{id}/ssh/tunnel (docs/connect.md): a WebSocket whose binary frames
// are the bytes to and from the pod's port 22, as a Duplex stream (ws's own, with back-pressure).
// Node only (a Duplex for ssh's ProxyCommand), so it lives with the CLI, not in the browser-safe client/.
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { rejectOnRefusal, type ApiClient } from '../client/index.ts';
import { useNodeWebSockets, wsModule } from './node-websocket.ts';

export function openSshTunnel(client: ApiClient, podId: string): Promise<Duplex> {
  useNodeWebSockets();
  const socket = client.webSocket(`/v2/pods/${encodeURIComponent(podId)}/ssh/tunnel`);
  const ws = socket as unknown as WebSocket;
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(wsModule().createWebSocketStream(ws)));
    rejectOnRefusal(socket, reject);
    ws.once('error', (e) => reject(e));
  });
}
